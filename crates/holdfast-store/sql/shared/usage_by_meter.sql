-- usage_by_meter: what was spent in [from, to) across accounts, by the meter of each
-- metered debit, with its seconds (NULL: spending not metered — debits of an amount,
-- captures — and job refunds; listed last).
--
-- :from  the period's start (micros, inclusive)
-- :to    the period's end (micros, exclusive)
SELECT meter AS group_key,
       CAST(SUM(CASE WHEN kind = 'job_refund' THEN 0 ELSE 1 END) AS BIGINT) AS entries,
       CAST(SUM(CASE WHEN kind = 'job_refund' THEN 0 ELSE -delta END) AS BIGINT) AS spent,
       CAST(SUM(CASE WHEN kind = 'job_refund' THEN delta ELSE 0 END) AS BIGINT) AS refunded,
       CAST(COALESCE(SUM(seconds), 0) AS BIGINT) AS seconds
  FROM ledger
 WHERE created_at >= :from AND created_at < :to
   AND pocket = 'money' AND kind IN ('debit', 'capture', 'job_refund')
 GROUP BY meter
 ORDER BY meter IS NULL, meter
