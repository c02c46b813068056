-- sweep_stale_open_jobs: open (queued or in-progress) jobs created at or before a time,
-- the oldest first.
--
-- :created_before_micros  now minus stale_after_seconds
-- :limit                  at most this many jobs
SELECT job_id
FROM jobs
WHERE status IN ('queued', 'in_progress')
  AND created_at <= :created_before_micros
ORDER BY created_at
LIMIT :limit
