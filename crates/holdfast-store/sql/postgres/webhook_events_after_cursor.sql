-- webhook_events_after_cursor: outbox events after an endpoint's cursor, in the one order
-- every reader sees (as list_events): by the feed's positions.
--
-- :after_event_id  the cursor: the last event already enqueued (0 = from the start)
-- :limit           at most this many events
SELECT event.event_id, event.type, event.account_id, event.job_id, event.data, event.created_at,
       event.actor
FROM events AS event
WHERE event.position > (
    CASE WHEN :after_event_id::bigint = 0 THEN 0
         -- a cursor at a pruned event reads on from the head of the feed left
         ELSE coalesce((SELECT cursor_event.position FROM events AS cursor_event
                        WHERE cursor_event.event_id = :after_event_id),
                       (SELECT last_position FROM retention_marks WHERE what = 'events'))
    END
  )
ORDER BY event.position
LIMIT :limit
