-- Retention (docs/OPERATIONS.md "Retention"): the prune pass deletes idempotency records,
-- finished jobs, events and ended webhook deliveries older than the card's windows, in
-- chunks. The ledger is never pruned.

-- Per pruned table, how far pruning has gone, so the audit and the feed can tell a row
-- pruned from a row missing: `pruned_before` is a time (rows older than it may be gone;
-- the audit does not ask an entry older than it for its key's record or its job), and
-- for events `last_position` is the feed position up to which the feed's head is gone
-- (a cursor naming a pruned event reads on from there).
CREATE TABLE retention_marks (
    what          TEXT   NOT NULL PRIMARY KEY,
    pruned_before BIGINT NOT NULL,
    last_position BIGINT
);

-- Each prune finds its oldest rows by an index.
CREATE INDEX idempotency_by_age ON idempotency (created_at);
CREATE INDEX jobs_finished_by_age ON jobs (finished_at) WHERE finished_at IS NOT NULL;
CREATE INDEX webhook_deliveries_ended ON webhook_deliveries (finished_at) WHERE status IN ('delivered', 'dead');
