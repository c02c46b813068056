-- list_events: outbox events after a cursor, optionally of one account and/or one type,
-- in the one order every reader sees (SQLite has one writer at a time, so event ids are
-- in commit order).
--
-- :after_event_id  the cursor: the last event already read (0 = from the start)
-- :account_id      only this account's events (NULL = every account)
-- :event_type      only events of this type (NULL = every type)
-- :actor           only events this actor caused (NULL = every actor)
-- :limit           at most this many events
SELECT event_id, type, account_id, job_id, data, created_at, actor
FROM events
WHERE event_id > :after_event_id
  AND (:account_id IS NULL OR account_id = :account_id)
  AND (:event_type IS NULL OR type = :event_type)
  AND (:actor IS NULL OR actor = :actor)
ORDER BY event_id
LIMIT :limit
