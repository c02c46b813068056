-- usage_by_kind_and_meter_of_account: as usage_by_kind_and_meter, of one account
-- (ledger_by_account): a statement's spending by job kind and by meter in one read.
--
-- :account_id  the account
-- :from        the period's start (micros, inclusive)
-- :to          the period's end (micros, exclusive)
SELECT jobs.kind AS job_kind, ledger.meter,
       CAST(SUM(CASE WHEN ledger.kind = 'job_refund' THEN 0 ELSE 1 END) AS BIGINT) AS entries,
       CAST(SUM(CASE WHEN ledger.kind = 'job_refund' THEN 0 ELSE -ledger.delta END) AS BIGINT) AS spent,
       CAST(SUM(CASE WHEN ledger.kind = 'job_refund' THEN ledger.delta ELSE 0 END) AS BIGINT) AS refunded,
       CAST(COALESCE(SUM(ledger.seconds), 0) AS BIGINT) AS seconds
  FROM ledger
  LEFT JOIN jobs ON jobs.job_id = ledger.ref AND jobs.account_id = ledger.account_id
 WHERE ledger.account_id = :account_id
   AND ledger.created_at >= :from AND ledger.created_at < :to
   AND ledger.pocket = 'money' AND ledger.kind IN ('debit', 'capture', 'job_refund')
 GROUP BY jobs.kind, ledger.meter
