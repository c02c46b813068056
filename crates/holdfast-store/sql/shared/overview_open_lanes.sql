-- overview_open_lanes: per lane, the jobs queued and in progress and when the oldest
-- queued one was submitted (only open jobs are read: the partial index jobs_open_by_age).
SELECT lane,
       count(*) FILTER (WHERE status = 'queued') AS queued,
       count(*) FILTER (WHERE status = 'in_progress') AS in_progress,
       min(created_at) FILTER (WHERE status = 'queued') AS oldest_queued_at
FROM jobs
WHERE status IN ('queued', 'in_progress')
GROUP BY lane
ORDER BY lane
