-- accounts_of_jobs: the account of each job named (a job's account never changes), read
-- without a lock so that the accounts can be locked in sorted order next. Jobs that do
-- not exist are absent.
--
-- :job_ids  the jobs, as a JSON array of strings
SELECT job_id, account_id
  FROM jobs
 WHERE job_id = ANY (ARRAY(SELECT jsonb_array_elements_text(:job_ids::jsonb)))
