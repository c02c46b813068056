-- lease_jobs: hands up to :max_jobs of the oldest queued jobs of a lane, whose accounts
-- are neither suspended, blocked nor banned, to a worker in ONE statement: each
-- in_progress with a fresh lease token of its own and an expiry. A single lease is a
-- call of one. One guarded UPDATE in BEGIN IMMEDIATE: workers never get the same job.
-- The tokens are paired with the jobs by rank (oldest first).
--
-- :lane           the lane
-- :lease_tokens   a fresh token per job that may be handed out, as a JSON array of
--                 strings (a column bound on SQLite; at least :max_jobs of them)
-- :max_jobs       the most jobs to hand out
-- :lease_seconds  each lease's length
-- :worker_id      the worker
-- :actor          who leased them (the worker's key; see migration 0007)
WITH picked_job AS (
    SELECT job.job_id, job.created_at
      FROM jobs AS job
      JOIN accounts AS account ON account.account_id = job.account_id
     WHERE job.lane = :lane
       AND job.status = 'queued'
       AND account.suspended_at IS NULL
       AND account.blocked_at IS NULL
       AND account.banned_at IS NULL
     ORDER BY job.created_at, job.job_id
     LIMIT :max_jobs
), ranked_job AS (
    SELECT job_id, row_number() OVER (ORDER BY created_at, job_id) AS rank
      FROM picked_job
), fresh_token AS (
    SELECT value AS token, key + 1 AS rank
      FROM json_each(:lease_tokens)
)
UPDATE jobs
   SET status = 'in_progress',
       lease_token = fresh_token.token,
       lease_seconds = :lease_seconds,
       worker_id = :worker_id,
       leased_by_actor = :actor,
       started_at = COALESCE(started_at, CAST((julianday('now') - 2440587.5) * 86400000000 AS INTEGER)),
       lease_expires_at = CAST((julianday('now') - 2440587.5) * 86400000000 AS INTEGER) + :lease_seconds * 1000000
  FROM ranked_job
  JOIN fresh_token ON fresh_token.rank = ranked_job.rank
 WHERE jobs.job_id = ranked_job.job_id
   AND jobs.status = 'queued'
RETURNING *
