-- prune_events_head: how far the head of the feed may go: among the first :limit events
-- in feed order (event id), the id just before the first that must stay (made at or
-- after :cutoff, or named by a webhook delivery), or the last one when all may go. The
-- feed is pruned only from its head, so a cursor never lands in a hole.
--
-- :cutoff  events made before this time may go (micros)
-- :limit   look at most this many events ahead
WITH head AS (
    SELECT event.event_id AS position,
           event.created_at < :cutoff
             AND NOT EXISTS (SELECT 1 FROM webhook_deliveries AS delivery
                             WHERE delivery.event_id = event.event_id) AS prunable
    FROM events AS event
    ORDER BY event.event_id
    LIMIT :limit
)
SELECT coalesce((SELECT min(position) - 1 FROM head WHERE NOT prunable),
                (SELECT max(position) FROM head),
                0) AS through
