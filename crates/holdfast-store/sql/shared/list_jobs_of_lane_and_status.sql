-- list_jobs_of_lane_and_status: one lane's jobs with one status, newest first (the index
-- jobs_by_lane_status; queued ones also jobs_queue).
--
-- :lane    the lane
-- :status  the status
-- :limit   at most this many jobs
SELECT *
FROM jobs
WHERE lane = :lane AND status = :status
ORDER BY created_at DESC, job_id DESC
LIMIT :limit
