-- webhook_events_after_cursor: outbox events after an endpoint's cursor, in event id
-- order (SQLite has one writer at a time, so that is commit order).
--
-- :after_event_id  the cursor: the last event already enqueued (0 = from the start)
-- :limit           at most this many events
SELECT event_id, type, account_id, job_id, data, created_at, actor
FROM events
WHERE event_id > :after_event_id
ORDER BY event_id
LIMIT :limit
