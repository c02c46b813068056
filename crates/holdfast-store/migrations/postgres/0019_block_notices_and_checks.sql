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

-- accounts.live_blocks: the account's credit blocks that hold money (remaining > 0), as
-- the lock statements read them: a JSON array of [block_id, category, priority,
-- expires_at, created_at, granted, remaining, held], by block_id; NULL for an account
-- that never had a block. Every change of a block writes its account's row anyway, so
-- the writer sets it there, and a lock reads the blocks with the row it locks instead
-- of probing credit_blocks (about 25 us of PostgreSQL CPU per account: BENCHMARKS.md
-- "Credit blocks"). credit_blocks stays the record of each block (terms, history, the
-- passes); the audit checks the two agree (invariant 10).
ALTER TABLE accounts ADD COLUMN live_blocks TEXT;
UPDATE accounts
   SET live_blocks = (SELECT COALESCE(json_agg(json_build_array(block_id, category, priority,
                                                                expires_at, created_at, granted,
                                                                remaining, held)
                                               ORDER BY block_id), '[]')::text
                        FROM credit_blocks
                       WHERE credit_blocks.account_id = accounts.account_id AND remaining > 0)
 WHERE has_blocks = 1;
ALTER TYPE account_change ADD ATTRIBUTE live_blocks TEXT;
