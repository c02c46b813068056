-- lease_job: hands the oldest queued job of a lane whose account is neither suspended,
-- blocked nor banned to a worker: in_progress, with a fresh lease token and an expiry.
-- One guarded UPDATE in BEGIN IMMEDIATE: workers never get the same job.
--
-- :lane           the lane
-- :lease_token    the new lease's token
-- :lease_seconds  the lease's length
-- :worker_id      the worker
-- :actor          who leased it (the worker's key; see migration 0007)
UPDATE jobs
   SET status = 'in_progress',
       lease_token = :lease_token,
       lease_seconds = :lease_seconds,
       worker_id = :worker_id,
       leased_by_actor = :actor,
       started_at = COALESCE(started_at, CAST((julianday('now') - 2440587.5) * 86400000000 AS INTEGER)),
       lease_expires_at = CAST((julianday('now') - 2440587.5) * 86400000000 AS INTEGER) + :lease_seconds * 1000000
 WHERE status = 'queued'
   AND job_id = (
    SELECT job.job_id
      FROM jobs AS job
      JOIN accounts AS account ON account.account_id = job.account_id
     WHERE job.lane = :lane
       AND job.status = 'queued'
       AND account.suspended_at IS NULL
       AND account.blocked_at IS NULL
       AND account.banned_at IS NULL
     ORDER BY job.created_at, job.job_id
     LIMIT 1)
RETURNING *
