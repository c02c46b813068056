-- blocks_made_until: the credit blocks an account's credits made up to one entry (a
-- block's id is its credit's entry id), for balance at a time.
--
-- :account_id  the account
-- :last_entry  the last entry that counts
SELECT block_id, category, priority, expires_at, created_at, granted, remaining, held
  FROM credit_blocks
 WHERE account_id = :account_id AND block_id <= :last_entry
 ORDER BY block_id
