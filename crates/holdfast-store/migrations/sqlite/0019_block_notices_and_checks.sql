-- Credit blocks (issue #41), told and checked. As migrations/postgres/0019.
ALTER TABLE credit_blocks ADD COLUMN expiring_noticed_at INTEGER;
ALTER TABLE credit_blocks ADD COLUMN checked_entry_id INTEGER NOT NULL DEFAULT 0;
ALTER TABLE credit_blocks ADD COLUMN checked_remaining INTEGER NOT NULL DEFAULT 0;
