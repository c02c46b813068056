-- recent_account_events: an account's newest events (the index events_by_account).
--
-- :account_id  the account
-- :limit       at most this many
SELECT event_id, type, account_id, job_id, data, created_at, actor
  FROM events
 WHERE account_id = :account_id
 ORDER BY event_id DESC
 LIMIT :limit
