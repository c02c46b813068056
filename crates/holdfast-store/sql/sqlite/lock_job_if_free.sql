-- lock_job_if_free: a job the sweeper may expire (the write lock is held from BEGIN
-- IMMEDIATE; the account's pockets were read with the account).
--
-- :job_id      the job
SELECT *
  FROM jobs
 WHERE job_id = :job_id
