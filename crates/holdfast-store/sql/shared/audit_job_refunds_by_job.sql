-- audit_job_refunds_by_job: per (account, job, pocket): what the job_refund entries gave
-- back in total and when the last was made (ref is the job id).
SELECT account_id,
       ref,
       pocket,
       MAX(created_at) AS last_at,
       CAST(SUM(delta) AS BIGINT) AS total
FROM ledger
WHERE kind = 'job_refund'
GROUP BY account_id, ref, pocket
