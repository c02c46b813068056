-- accounts_with_blocks_to_expire: the accounts with a credit block past its expiry that
-- still has free money (remaining less held), for the expiry pass (credit_blocks_by_expiry).
--
-- :now    the time (database clock, micros)
-- :limit  at most this many accounts
SELECT DISTINCT account_id
  FROM credit_blocks
 WHERE expires_at <= :now AND remaining > 0 AND held < remaining
 ORDER BY account_id
 LIMIT :limit
