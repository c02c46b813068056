-- prune_events: deletes the head of the feed up to position :through (as
-- prune_events_head found it).
--
-- :through  the last position that goes
DELETE FROM events WHERE position <= :through
