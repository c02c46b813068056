-- notice_claim_due_jobs: marks open jobs whose notice time has passed as noticed (once:
-- only jobs not noticed yet), the earliest due first, skipping rows another pass has
-- locked; returns what the job.waiting event says.
--
-- :now_micros  the database clock
-- :limit       at most this many jobs
WITH due_notice AS (
  SELECT job_id
  FROM jobs
  WHERE noticed = 0
    AND status IN ('queued', 'in_progress')
    AND notice_at <= :now_micros
  ORDER BY notice_at
  LIMIT :limit
  FOR UPDATE SKIP LOCKED
)
UPDATE jobs
SET noticed = 1
WHERE job_id IN (SELECT job_id FROM due_notice)
RETURNING job_id, account_id, kind, lane, status, notice_at
