-- read_block: one credit block of an account, whatever it holds (a job refund gives back
-- to a block the job's capture emptied).
--
-- :account_id  the account
-- :block_id    the block
SELECT block_id, category, priority, expires_at, created_at, granted, remaining, held
  FROM credit_blocks
 WHERE account_id = :account_id AND block_id = :block_id
