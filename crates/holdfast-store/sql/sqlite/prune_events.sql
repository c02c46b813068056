-- prune_events: deletes the head of the feed up to event :through (as prune_events_head
-- found it).
--
-- :through  the last event id that goes
DELETE FROM events WHERE event_id <= :through
