-- webhook_advance_cursor: moves an endpoint's outbox cursor past the events it read.
--
-- :endpoint       the webhook endpoint (its URL)
-- :last_event_id  the last event read
UPDATE webhook_cursors
SET last_event_id = :last_event_id
WHERE endpoint = :endpoint
