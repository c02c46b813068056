-- audit_capture_entries_by_job: per (account, job, pocket): how many capture entries the
-- ledger has and what they took in total (ref is the job id).
SELECT account_id,
       ref,
       pocket,
       COUNT(*) AS n,
       CAST(SUM(-delta) AS BIGINT) AS total
FROM ledger
WHERE kind = 'capture'
GROUP BY account_id, ref, pocket
