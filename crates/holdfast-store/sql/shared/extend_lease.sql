-- extend_lease: a heartbeat's extension of a lease core found live (the job row is
-- locked: lock_job_lease), by the lease's length from now; and whether a cancel was asked.
--
-- :job_id  the job
-- :now     the database clock as the lease was read (micros)
UPDATE jobs
   SET lease_expires_at = :now + lease_seconds * 1000000
 WHERE job_id = :job_id
RETURNING lease_expires_at, cancel_requested
