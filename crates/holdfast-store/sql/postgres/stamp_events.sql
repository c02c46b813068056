-- stamp_events: gives committed events without a position the next positions of the
-- feed, in event id order, after the last position given. Run only under
-- lock_event_sequencer, in its own statement, so that it sees every earlier stamp
-- (read committed: a new snapshot per statement) and its positions continue them with
-- no gap.
--
-- :limit  at most this many events
UPDATE events
SET position = last.position + stamped.n
FROM (
    SELECT event_id, row_number() OVER (ORDER BY event_id) AS n
    FROM (
        SELECT event_id FROM events WHERE position IS NULL ORDER BY event_id LIMIT :limit
    ) AS waiting
) AS stamped,
(SELECT coalesce(max(position), 0) AS position FROM events) AS last
WHERE events.event_id = stamped.event_id
