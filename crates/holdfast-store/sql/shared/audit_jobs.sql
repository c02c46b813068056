-- audit_jobs: every job, every column (with the concurrency limit and the open jobs
-- counted at submit).
SELECT *
FROM jobs
