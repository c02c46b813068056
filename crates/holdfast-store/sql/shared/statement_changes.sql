-- statement_changes: an account's money entries written in [from, to), by kind: how many
-- and their sum (signed: credits positive, spending negative).
--
-- :account_id  the account
-- :from        the period's start (micros, inclusive)
-- :to          the period's end (micros, exclusive)
SELECT kind,
       CAST(COUNT(*) AS BIGINT) AS entries,
       CAST(SUM(delta) AS BIGINT) AS amount
  FROM ledger
 WHERE account_id = :account_id AND pocket = 'money'
   AND created_at >= :from AND created_at < :to
 GROUP BY kind
 ORDER BY kind
