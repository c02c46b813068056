-- list_events: outbox events after a cursor, optionally of one account and/or one type,
-- in the one order every reader sees: the feed's positions (stamp_events gives each
-- committed event the next one), so a cursor never skips or repeats an event and no
-- transaction but the event's own writer holds it back.
--
-- :after_event_id  the cursor: the last event already read (0 = from the start)
-- :account_id      only this account's events (NULL = every account)
-- :event_type      only events of this type (NULL = every type)
-- :actor           only events this actor caused (NULL = every actor)
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
  AND (:account_id::text IS NULL OR event.account_id = :account_id)
  AND (:event_type::text IS NULL OR event.type = :event_type)
  AND (:actor::text IS NULL OR event.actor = :actor)
ORDER BY event.position
LIMIT :limit
