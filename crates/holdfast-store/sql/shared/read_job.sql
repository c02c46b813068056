-- read_job: one job by id, every column.
--
-- :job_id  the job
SELECT *
FROM jobs
WHERE job_id = :job_id
