-- overview_finished_per_minute: jobs finished since a time, per minute and end status.
--
-- :since  micros; only jobs finished at or after it (the index jobs_finished_by_age)
SELECT finished_at / 60000000 AS minute, status, count(*) AS jobs
FROM jobs
WHERE finished_at >= :since
GROUP BY finished_at / 60000000, status
ORDER BY minute
