-- lease_jobs: hands up to :max_jobs of the oldest queued jobs of a lane, whose accounts
-- are neither suspended, blocked nor banned, to a worker in ONE statement: each
-- in_progress with a fresh lease token of its own and an expiry. A single lease is a
-- call of one. SKIP LOCKED: workers racing for the lane never get the same job and never
-- wait. The tokens are paired with the jobs by rank (oldest first).
--
-- :lane           the lane
-- :lease_tokens   a fresh token per job that may be handed out, an array of text (at
--                 least :max_jobs of them)
-- :max_jobs       the most jobs to hand out
-- :lease_seconds  each lease's length
-- :worker_id      the worker
-- :actor          who leased them (the worker's key; see migration 0007)
WITH picked_job AS (
    SELECT job.job_id, row_number() OVER (ORDER BY job.created_at, job.job_id) AS rank
      FROM (SELECT job.job_id, job.created_at
              FROM jobs AS job
              JOIN accounts AS account ON account.account_id = job.account_id
             WHERE job.lane = :lane
               AND job.status = 'queued'
               AND account.suspended_at IS NULL
               AND account.blocked_at IS NULL
               AND account.banned_at IS NULL
             ORDER BY job.created_at, job.job_id
             LIMIT :max_jobs::bigint
               FOR UPDATE OF job SKIP LOCKED) AS job
)
UPDATE jobs
   SET status = 'in_progress',
       lease_token = (:lease_tokens::text[])[picked_job.rank],
       lease_seconds = :lease_seconds,
       worker_id = :worker_id,
       leased_by_actor = :actor,
       started_at = COALESCE(started_at, (extract(epoch from clock_timestamp()) * 1000000)::bigint),
       lease_expires_at = (extract(epoch from clock_timestamp()) * 1000000)::bigint + :lease_seconds::bigint * 1000000
  FROM picked_job
 WHERE jobs.job_id = picked_job.job_id
   AND jobs.status = 'queued'
RETURNING jobs.*
