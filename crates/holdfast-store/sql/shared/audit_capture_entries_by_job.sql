-- audit_capture_entries_by_job: per (account, job, pocket): how many capture entries the
-- ledger has, what they took in total and when the last was made (ref is the job id).
SELECT account_id,
       ref,
       pocket,
       COUNT(*) AS n,
       MAX(created_at) AS last_at,
       CAST(SUM(-delta) AS BIGINT) AS total
FROM ledger
WHERE kind = 'capture'
GROUP BY account_id, ref, pocket
