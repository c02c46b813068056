-- Credit blocks (issue #41), told and checked. No index names these columns, so a
-- draw's update of a block stays HOT.
-- expiring_noticed_at: when the expiry pass told that the block expires within the
-- card's timeouts.credit_expiring_notice_days (NULL: not told); set once.
-- checked_entry_id, checked_remaining: reconciliation's checkpoint of the block: the
-- signed sum of the ledger lines naming it up to that entry (0: not checked yet; the
-- block's own entry is the first that can name it).
ALTER TABLE credit_blocks ADD COLUMN expiring_noticed_at BIGINT;
ALTER TABLE credit_blocks ADD COLUMN checked_entry_id BIGINT NOT NULL DEFAULT 0;
ALTER TABLE credit_blocks ADD COLUMN checked_remaining BIGINT NOT NULL DEFAULT 0;
