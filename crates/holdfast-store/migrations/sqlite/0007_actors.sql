-- Who caused each change: the actor of every ledger entry and event, and of a job's
-- submit, lease and end — `key:<key id>` for an API key (`key:env` for the environment's
-- admin key), `cli:<OS user>`, `system:<pass>` for a scheduled pass, `library` for an
-- embedding program that names none. NULL on rows written before this migration.
ALTER TABLE ledger ADD COLUMN actor TEXT;
ALTER TABLE events ADD COLUMN actor TEXT;
ALTER TABLE jobs ADD COLUMN submitted_by_actor TEXT;
ALTER TABLE jobs ADD COLUMN leased_by_actor TEXT;
ALTER TABLE jobs ADD COLUMN finished_by_actor TEXT;
CREATE INDEX events_by_actor ON events (actor, event_id);
-- The currency a job's hold was priced in (the card's at submit).
ALTER TABLE jobs ADD COLUMN currency TEXT;
