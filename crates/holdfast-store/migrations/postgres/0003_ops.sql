-- Operations passes (reconciliation, reactivation) and webhook delivery. Times are BIGINT
-- microseconds since the Unix epoch.

-- Per (account, pocket): what the ledger summed to up to `last_entry_id` when the pocket
-- was last reconciled, so the next run reads only the entries written since. For the
-- money pocket also the counters' sources (credits; debits and money captures).
CREATE TABLE reconcile_checkpoints (
    account_id    TEXT    NOT NULL,
    pocket        TEXT    NOT NULL,
    last_entry_id BIGINT  NOT NULL,
    ledger_sum    BIGINT  NOT NULL,
    credited_sum  BIGINT  NOT NULL DEFAULT 0,
    spent_sum     BIGINT  NOT NULL DEFAULT 0,
    checked_at    BIGINT  NOT NULL,
    PRIMARY KEY (account_id, pocket)
);

-- The incremental sum reads one pocket's entries after a checkpoint.
CREATE INDEX ledger_by_pocket ON ledger (account_id, pocket, entry_id);

-- Where a bounded pass that walks every account stopped, so the next run goes on from
-- there instead of checking the same first accounts again.
CREATE TABLE pass_cursors (
    pass     TEXT NOT NULL PRIMARY KEY,
    position TEXT NOT NULL
);

-- Reactivation selects idle accounts by their last activity.
CREATE INDEX accounts_idle ON accounts (last_active_at) WHERE last_active_at IS NOT NULL AND blocked_at IS NULL;

-- Per webhook endpoint: the last outbox event turned into deliveries.
CREATE TABLE webhook_cursors (
    endpoint      TEXT    NOT NULL PRIMARY KEY,
    last_event_id BIGINT  NOT NULL
);

-- One delivery per (event, endpoint). `delivery_id` is assigned in outbox order, so per
-- (endpoint, account) it is the order of delivery: a pending delivery holds back the
-- account's later ones until it is delivered or dead.
CREATE TABLE webhook_deliveries (
    delivery_id     BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    event_id        BIGINT  NOT NULL,
    endpoint        TEXT    NOT NULL,
    account_id      TEXT    NOT NULL,
    status          TEXT    NOT NULL CHECK (status IN ('pending', 'delivered', 'dead')),
    attempts        BIGINT  NOT NULL DEFAULT 0,
    next_attempt_at BIGINT  NOT NULL,
    lease_token     TEXT,
    lease_until     BIGINT,
    last_error      TEXT,
    created_at      BIGINT  NOT NULL,
    finished_at     BIGINT,
    UNIQUE (event_id, endpoint)
);
CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at, delivery_id) WHERE status = 'pending';
CREATE INDEX webhook_deliveries_queue ON webhook_deliveries (endpoint, account_id, delivery_id) WHERE status = 'pending';
CREATE INDEX webhook_deliveries_dead ON webhook_deliveries (delivery_id) WHERE status = 'dead';
