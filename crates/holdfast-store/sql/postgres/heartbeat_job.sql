-- heartbeat_job: extends a valid lease by its length (valid: the token matches, the job
-- is in progress and the clock is before its expiry), and tells whether a cancel was
-- asked. No row: the lease is not valid.
--
-- :job_id       the job
-- :lease_token  the worker's lease token
UPDATE jobs
   SET lease_expires_at = (extract(epoch from clock_timestamp()) * 1000000)::bigint + lease_seconds * 1000000
 WHERE job_id = :job_id
   AND lease_token = :lease_token
   AND status = 'in_progress'
   AND lease_expires_at > (extract(epoch from clock_timestamp()) * 1000000)::bigint
RETURNING lease_expires_at, cancel_requested
