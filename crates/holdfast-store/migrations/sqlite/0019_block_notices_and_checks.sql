-- Credit blocks (issue #41), told and checked. As migrations/postgres/0019.
ALTER TABLE credit_blocks ADD COLUMN expiring_noticed_at INTEGER;
ALTER TABLE credit_blocks ADD COLUMN checked_entry_id INTEGER NOT NULL DEFAULT 0;
ALTER TABLE credit_blocks ADD COLUMN checked_remaining INTEGER NOT NULL DEFAULT 0;

-- accounts.live_blocks: as migrations/postgres/0019.
ALTER TABLE accounts ADD COLUMN live_blocks TEXT;
UPDATE accounts
   SET live_blocks = (SELECT json_group_array(json_array(block_id, category, priority, expires_at,
                                                         created_at, granted, remaining, held))
                        FROM (SELECT * FROM credit_blocks
                               WHERE credit_blocks.account_id = accounts.account_id
                                 AND remaining > 0
                               ORDER BY block_id))
 WHERE has_blocks = 1;
