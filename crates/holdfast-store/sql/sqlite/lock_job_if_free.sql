-- lock_job_if_free: a job the sweeper may expire (the write lock is held from BEGIN
-- IMMEDIATE; the account's pockets were read with the account).
--
-- :job_id      the job
SELECT *, NULL AS allowances, NULL AS open_jobs, NULL AS keys
  FROM jobs
 WHERE job_id = :job_id
