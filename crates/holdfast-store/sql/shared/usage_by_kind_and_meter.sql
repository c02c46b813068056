-- usage_by_kind_and_meter: what was spent in [from, to) across accounts, by the kind of
-- the job each debit, capture or job refund names (NULL: none of this engine's, or
-- pruned) and by the meter of each metered debit (NULL: debits of an amount, captures,
-- job refunds), with the metered seconds: one read of the period for either grouping,
-- which the caller sums by the one it reports.
--
-- :from  the period's start (micros, inclusive)
-- :to    the period's end (micros, exclusive)
SELECT jobs.kind AS job_kind, ledger.meter,
       CAST(SUM(CASE WHEN ledger.kind = 'job_refund' THEN 0 ELSE 1 END) AS BIGINT) AS entries,
       CAST(SUM(CASE WHEN ledger.kind = 'job_refund' THEN 0 ELSE -ledger.delta END) AS BIGINT) AS spent,
       CAST(SUM(CASE WHEN ledger.kind = 'job_refund' THEN ledger.delta ELSE 0 END) AS BIGINT) AS refunded,
       CAST(COALESCE(SUM(ledger.seconds), 0) AS BIGINT) AS seconds
  FROM ledger
  LEFT JOIN jobs ON jobs.job_id = ledger.ref AND jobs.account_id = ledger.account_id
 WHERE ledger.created_at >= :from AND ledger.created_at < :to
   AND ledger.pocket = 'money' AND ledger.kind IN ('debit', 'capture', 'job_refund')
 GROUP BY jobs.kind, ledger.meter
