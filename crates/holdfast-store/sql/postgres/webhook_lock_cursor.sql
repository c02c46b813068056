-- webhook_lock_cursor: locks an endpoint's outbox cursor row (so one enqueuer at a time
-- moves it) and reads it.
--
-- :endpoint  the webhook endpoint (its URL)
SELECT last_event_id
FROM webhook_cursors
WHERE endpoint = :endpoint
FOR UPDATE
