-- accounts_with_blocks_to_expire: the accounts with a credit block past its expiry that
-- the expiry pass has not closed (credit_blocks_by_expiry): what is free of it is to be
-- written off, or it is to be closed.
--
-- :now    the time (database clock, micros)
-- :limit  at most this many accounts
SELECT DISTINCT account_id
  FROM credit_blocks
 WHERE expires_at <= :now AND closed_at IS NULL
 ORDER BY account_id
 LIMIT :limit
