-- jobs_named_by_refs: the jobs of this engine that debits name by job_ref (a job of the
-- debit's own account), with what metered usage for them needs: status, who ended them
-- and when. Runs after the accounts are locked, so no job named can end meanwhile.
--
-- :refs  the (account, job_ref) pairs, as a JSON array of [account_id, job_ref]
WITH named AS (
    SELECT DISTINCT pair->>0 AS account_id, pair->>1 AS job_id
      FROM jsonb_array_elements(:refs::jsonb) AS pair
)
SELECT job.account_id, job.job_id, job.status, job.finished_by, job.finished_at
  FROM named
  JOIN jobs AS job ON job.job_id = named.job_id AND job.account_id = named.account_id
 -- the jobs again as an array: probes of the primary key, never a hash join over every
 -- job (which a small or stale estimate of the table would choose)
 WHERE job.job_id = ANY (ARRAY(SELECT job_id FROM named))
