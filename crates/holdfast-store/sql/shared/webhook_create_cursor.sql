-- webhook_create_cursor: starts an endpoint's outbox cursor at the beginning, unless it
-- has one.
--
-- :endpoint  the webhook endpoint (its URL)
INSERT INTO webhook_cursors (endpoint, last_event_id)
VALUES (:endpoint, 0)
ON CONFLICT (endpoint) DO NOTHING
