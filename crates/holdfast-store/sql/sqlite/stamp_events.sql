-- stamp_events: SQLite needs no stamp (see lock_event_sequencer); never run.
--
-- :limit  unused
SELECT :limit WHERE 0
