-- list_jobs: jobs newest first, optionally of one lane, one status and/or one account.
--
-- :lane        only jobs in this lane (NULL = every lane)
-- :status      only jobs with this status (NULL = every status)
-- :account_id  only this account's jobs (NULL = every account)
-- :limit       at most this many jobs
SELECT *
FROM jobs
WHERE (:lane::text IS NULL OR lane = :lane)
  AND (:status::text IS NULL OR status = :status)
  AND (:account_id::text IS NULL OR account_id = :account_id)
ORDER BY created_at DESC, job_id DESC
LIMIT :limit
