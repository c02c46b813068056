-- sweep_jobs_with_lease_passed: in-progress jobs whose lease has run out, the longest
-- overdue first.
--
-- :now_micros  the database clock
-- :limit       at most this many jobs
SELECT job_id
FROM jobs
WHERE status = 'in_progress'
  AND lease_expires_at <= :now_micros
ORDER BY lease_expires_at
LIMIT :limit
