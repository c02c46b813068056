-- The events feed's order, stamped after commit (docs/DESIGN.md "The event feed"): each
-- committed event gets the next `position` from one sequencer at a time, so readers page
-- by position and no transaction elsewhere on the cluster can hold the feed back (the
-- xid rule it replaces showed only events older than the cluster's oldest running
-- transaction). NULL until stamped. Events written before this migration keep their
-- (xid, event_id) order as positions 1, 2, ….
ALTER TABLE events ADD COLUMN position BIGINT;
UPDATE events
SET position = ordered.position
FROM (SELECT event_id, row_number() OVER (ORDER BY xid, event_id) AS position FROM events) AS ordered
WHERE events.event_id = ordered.event_id;
CREATE UNIQUE INDEX events_by_position ON events (position);
CREATE INDEX events_to_stamp ON events (event_id) WHERE position IS NULL;
DROP INDEX events_by_commit_order;
CREATE INDEX events_by_account_position ON events (account_id, position);
