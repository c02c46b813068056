-- read_event: one outbox event by id.
--
-- :event_id  the event
SELECT event_id, type, account_id, job_id, data, created_at, actor
FROM events
WHERE event_id = :event_id
