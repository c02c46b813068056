-- list_events: outbox events after a cursor, optionally of one account and/or one type,
-- in the one order every reader sees. Event ids are taken at insert, not at commit, so
-- a later id can commit first: only events whose writing transaction is older than
-- every transaction still in flight are shown (that prefix is final), paged in
-- (xid, event_id) order.
--
-- :after_event_id  the cursor: the last event already read (0 = from the start)
-- :account_id      only this account's events (NULL = every account)
-- :event_type      only events of this type (NULL = every type)
-- :actor           only events this actor caused (NULL = every actor)
-- :limit           at most this many events
SELECT event.event_id, event.type, event.account_id, event.job_id, event.data, event.created_at,
       event.actor
FROM events AS event
WHERE event.xid < pg_snapshot_xmin(pg_current_snapshot())
  AND (
    :after_event_id::bigint = 0
    OR (event.xid, event.event_id) > (
      SELECT cursor_event.xid, cursor_event.event_id
      FROM events AS cursor_event
      WHERE cursor_event.event_id = :after_event_id
    )
  )
  AND (:account_id::text IS NULL OR event.account_id = :account_id)
  AND (:event_type::text IS NULL OR event.type = :event_type)
  AND (:actor::text IS NULL OR event.actor = :actor)
ORDER BY event.xid, event.event_id
LIMIT :limit
