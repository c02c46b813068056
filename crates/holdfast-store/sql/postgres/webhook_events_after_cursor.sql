-- webhook_events_after_cursor: outbox events after an endpoint's cursor, in the one order
-- every reader sees (as list_events): only events whose writing transaction is older
-- than every transaction still in flight, in (xid, event_id) order.
--
-- :after_event_id  the cursor: the last event already enqueued (0 = from the start)
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
ORDER BY event.xid, event.event_id
LIMIT :limit
