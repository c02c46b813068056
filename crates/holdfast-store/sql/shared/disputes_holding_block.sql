-- disputes_holding_block: of an account's disputes, how many are open, how many made the
-- block it has now (blocked_at equal to the account's), and how many of those were lost
-- (a lost dispute holds the block it leaves).
--
-- :account_id  the account
-- :blocked_at  the account's blocked_at
SELECT CAST(COALESCE(SUM(CASE WHEN status = 'open' THEN 1 ELSE 0 END), 0) AS BIGINT) AS open,
       CAST(COALESCE(SUM(CASE WHEN blocked_at = :blocked_at THEN 1 ELSE 0 END), 0) AS BIGINT) AS made_block,
       CAST(COALESCE(SUM(CASE WHEN blocked_at = :blocked_at AND status = 'lost' THEN 1 ELSE 0 END), 0)
            AS BIGINT) AS lost_holding
  FROM payment_disputes
 WHERE account_id = :account_id
