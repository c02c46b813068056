-- account_blocks: the credit blocks of an account that hold money (the others are
-- history), read under its lock or in its read's snapshot by an account whose row says
-- it has had blocks (accounts.has_blocks).
--
-- :account_id  the account
SELECT block_id, category, priority, expires_at, created_at, granted, remaining, held
  FROM credit_blocks
 WHERE account_id = :account_id AND remaining > 0
 ORDER BY block_id
