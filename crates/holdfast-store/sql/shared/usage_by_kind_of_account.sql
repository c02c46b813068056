-- usage_by_kind_of_account: as usage_by_kind, of one account (ledger_by_account).
--
-- :account_id  the account
-- :from        the period's start (micros, inclusive)
-- :to          the period's end (micros, exclusive)
SELECT jobs.kind AS group_key,
       CAST(SUM(CASE WHEN ledger.kind = 'job_refund' THEN 0 ELSE 1 END) AS BIGINT) AS entries,
       CAST(SUM(CASE WHEN ledger.kind = 'job_refund' THEN 0 ELSE -ledger.delta END) AS BIGINT) AS spent,
       CAST(SUM(CASE WHEN ledger.kind = 'job_refund' THEN ledger.delta ELSE 0 END) AS BIGINT) AS refunded,
       CAST(COALESCE(SUM(ledger.seconds), 0) AS BIGINT) AS seconds
  FROM ledger
  LEFT JOIN jobs ON jobs.job_id = ledger.ref AND jobs.account_id = ledger.account_id
 WHERE ledger.account_id = :account_id
   AND ledger.created_at >= :from AND ledger.created_at < :to
   AND ledger.pocket = 'money' AND ledger.kind IN ('debit', 'capture', 'job_refund')
 GROUP BY jobs.kind
 ORDER BY jobs.kind IS NULL, jobs.kind
