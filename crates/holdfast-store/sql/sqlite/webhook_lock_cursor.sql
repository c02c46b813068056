-- webhook_lock_cursor: reads an endpoint's outbox cursor (the transaction's
-- BEGIN IMMEDIATE already holds the write lock).
--
-- :endpoint  the webhook endpoint (its URL)
SELECT last_event_id
FROM webhook_cursors
WHERE endpoint = :endpoint
