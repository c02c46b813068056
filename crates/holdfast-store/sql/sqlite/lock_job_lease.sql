-- lock_job_lease: a job (its lease as a heartbeat checks it — core's
-- decide::check_heartbeat), with the database clock; the write transaction (BEGIN
-- IMMEDIATE) holds the database's write lock already. No row: no such job.
--
-- :job_id  the job
SELECT jobs.*,
       CAST((julianday('now') - 2440587.5) * 86400000000 AS INTEGER) AS now
  FROM jobs
 WHERE job_id = :job_id
