-- lease_jobs: hands up to :max_jobs of the oldest queued jobs of a lane, whose accounts
-- are neither suspended, blocked nor banned, to a worker in ONE statement: each
-- in_progress with a fresh lease token of its own and an expiry. A single lease is a
-- call of one.
-- SKIP LOCKED: workers racing for the lane never get the same job and never wait. The
-- jobs are picked in a materialized CTE, run once (`job_id IN (… LIMIT … SKIP LOCKED)`
-- may be run again by its plan and hand out more than :max_jobs).
--
-- A token is 64 hex digits from the server's strong random source (gen_random_uuid:
-- pg_strong_random; two of them, 244 random bits), made per job by the statement
-- itself: tokens bound from the caller had to be paired with the jobs picked (a rank,
-- a join), which cost a lease of one about a third more than this form (issue #43).
--
-- :lane           the lane
-- :max_jobs       the most jobs to hand out
-- :lease_seconds  each lease's length
-- :worker_id      the worker
-- :actor          who leased them (the worker's key; see migration 0007)
WITH picked_job AS MATERIALIZED (
    SELECT job.job_id
      FROM jobs AS job
      JOIN accounts AS account ON account.account_id = job.account_id
     WHERE job.lane = :lane
       AND job.status = 'queued'
       AND account.suspended_at IS NULL
       AND account.blocked_at IS NULL
       AND account.banned_at IS NULL
     ORDER BY job.created_at, job.job_id
     LIMIT :max_jobs::bigint
       FOR UPDATE OF job SKIP LOCKED
)
UPDATE jobs
   SET status = 'in_progress',
       lease_token = replace(gen_random_uuid()::text || gen_random_uuid()::text, '-', ''),
       lease_seconds = :lease_seconds,
       worker_id = :worker_id,
       leased_by_actor = :actor,
       started_at = COALESCE(started_at, (extract(epoch from clock_timestamp()) * 1000000)::bigint),
       lease_expires_at = (extract(epoch from clock_timestamp()) * 1000000)::bigint + :lease_seconds::bigint * 1000000
  FROM picked_job
 WHERE jobs.job_id = picked_job.job_id
   AND jobs.status = 'queued'
RETURNING jobs.*
