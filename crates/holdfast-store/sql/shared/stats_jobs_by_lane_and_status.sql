-- stats_jobs_by_lane_and_status: how many jobs each lane has in each status.
SELECT lane, status, COUNT(*) AS n
FROM jobs
GROUP BY lane, status
