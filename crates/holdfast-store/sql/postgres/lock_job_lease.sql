-- lock_job_lease: a job (its lease as a heartbeat checks it — core's
-- decide::check_heartbeat), the job row locked, with the database clock. No row: no such
-- job.
--
-- :job_id  the job
SELECT jobs.*,
       (extract(epoch from clock_timestamp()) * 1000000)::bigint AS now
  FROM jobs
 WHERE job_id = :job_id
   FOR UPDATE
