-- job_events: a job's events in the order they were made, among its account's.
--
-- :account_id  the job's account
-- :job_id      the job
-- :limit       at most this many
SELECT event_id, type, account_id, job_id, data, created_at, actor
  FROM events
 WHERE account_id = :account_id AND job_id = :job_id
 ORDER BY event_id
 LIMIT :limit
