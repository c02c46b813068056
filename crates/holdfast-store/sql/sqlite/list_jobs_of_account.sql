-- list_jobs_of_account: one account's jobs newest first, optionally of one lane and/or one
-- status (the index jobs_by_account_newest).
--
-- :account_id  the account
-- :lane        only jobs in this lane (NULL = every lane)
-- :status      only jobs with this status (NULL = every status)
-- :limit       at most this many jobs
SELECT *
FROM jobs
WHERE account_id = :account_id
  AND (:lane IS NULL OR lane = :lane)
  AND (:status IS NULL OR status = :status)
ORDER BY created_at DESC, job_id DESC
LIMIT :limit
