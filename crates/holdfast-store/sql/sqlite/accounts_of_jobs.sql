-- accounts_of_jobs: the account of each job named (a job's account never changes), read
-- before the accounts are locked in sorted order. Jobs that do not exist are absent.
--
-- :job_ids  the jobs, as a JSON array of strings
SELECT job_id, account_id
  FROM jobs
 WHERE job_id IN (SELECT value FROM json_each(:job_ids))
