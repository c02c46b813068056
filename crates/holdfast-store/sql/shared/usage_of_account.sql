-- usage_of_account: what one account spent in [from, to), as usage_by_account counts
-- it, read by its own entries (ledger_by_account).
--
-- :account_id  the account
-- :from        the period's start (micros, inclusive)
-- :to          the period's end (micros, exclusive)
SELECT account_id AS group_key,
       CAST(SUM(CASE WHEN kind = 'job_refund' THEN 0 ELSE 1 END) AS BIGINT) AS entries,
       CAST(SUM(CASE WHEN kind = 'job_refund' THEN 0 ELSE -delta END) AS BIGINT) AS spent,
       CAST(SUM(CASE WHEN kind = 'job_refund' THEN delta ELSE 0 END) AS BIGINT) AS refunded,
       CAST(COALESCE(SUM(seconds), 0) AS BIGINT) AS seconds
  FROM ledger
 WHERE account_id = :account_id
   AND created_at >= :from AND created_at < :to
   AND pocket = 'money' AND kind IN ('debit', 'capture', 'job_refund')
 GROUP BY account_id
