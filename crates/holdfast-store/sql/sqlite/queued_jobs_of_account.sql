-- queued_jobs_of_account: an account's queued jobs, oldest first, for a ban to cancel
-- them (the write transaction holds the database lock).
--
-- :account_id  the account
SELECT *
  FROM jobs
 WHERE account_id = :account_id AND status = 'queued'
 ORDER BY created_at, job_id
