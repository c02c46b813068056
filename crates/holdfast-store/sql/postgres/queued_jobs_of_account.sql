-- queued_jobs_of_account: an account's queued jobs, oldest first, locked (after the
-- account row: the lock order everywhere), for a ban to cancel them.
--
-- :account_id  the account
SELECT *
  FROM jobs
 WHERE account_id = :account_id AND status = 'queued'
 ORDER BY created_at, job_id
   FOR UPDATE
