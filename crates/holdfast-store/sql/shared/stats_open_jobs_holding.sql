-- stats_open_jobs_holding: how many open (queued or in-progress) jobs hold something.
SELECT COUNT(*) AS n
FROM jobs
WHERE status IN ('queued', 'in_progress')
  AND hold <> '[]'
