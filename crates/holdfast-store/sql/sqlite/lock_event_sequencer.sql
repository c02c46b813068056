-- lock_event_sequencer: SQLite has one writer at a time, so its event ids are already in
-- commit order and the feed needs no sequencer; Store::stamp_events never runs this.
SELECT 0 AS locked
