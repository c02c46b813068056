-- open_job_holds_of_account: the hold lines (JSON) of an account's open (queued or
-- in-progress) jobs.
--
-- :account_id  the account
SELECT hold
FROM jobs
WHERE account_id = :account_id
  AND status IN ('queued', 'in_progress')
