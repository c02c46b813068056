-- lease_jobs: hands up to :max_jobs of the oldest queued jobs of a lane, whose accounts
-- are neither suspended, blocked nor banned, to a worker in ONE statement: each
-- in_progress with a fresh lease token of its own and an expiry. A single lease is a
-- call of one.
-- One guarded UPDATE in BEGIN IMMEDIATE: workers never get the same job.
--
-- A token is 64 hex digits of randomblob (SQLite's ChaCha20 generator, seeded from the
-- operating system), made per job by the statement itself: tokens bound from the caller
-- had to be paired with the jobs picked (UPDATE … FROM a ranked set), which cost the
-- single lifecycle 10-15 % (issue #43).
--
-- :lane           the lane
-- :max_jobs       the most jobs to hand out
-- :lease_seconds  each lease's length
-- :worker_id      the worker
-- :actor          who leased them (the worker's key; see migration 0007)
UPDATE jobs
   SET status = 'in_progress',
       lease_token = lower(hex(randomblob(32))),
       lease_seconds = :lease_seconds,
       worker_id = :worker_id,
       leased_by_actor = :actor,
       started_at = COALESCE(started_at, CAST((julianday('now') - 2440587.5) * 86400000000 AS INTEGER)),
       lease_expires_at = CAST((julianday('now') - 2440587.5) * 86400000000 AS INTEGER) + :lease_seconds * 1000000
 WHERE status = 'queued'
   AND job_id IN (
    SELECT job.job_id
      FROM jobs AS job
      JOIN accounts AS account ON account.account_id = job.account_id
     WHERE job.lane = :lane
       AND job.status = 'queued'
       AND account.suspended_at IS NULL
       AND account.blocked_at IS NULL
       AND account.banned_at IS NULL
     ORDER BY job.created_at, job.job_id
     LIMIT :max_jobs)
RETURNING *
