-- request_cancel: marks a running job of a cooperative kind; its worker learns it on
-- its next heartbeat and finishes it.
--
-- :job_id  the job
UPDATE jobs
   SET cancel_requested = 1
 WHERE job_id = :job_id
