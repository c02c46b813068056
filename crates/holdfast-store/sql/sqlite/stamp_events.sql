-- stamp_events: SQLite needs no stamp (see lock_event_sequencer); never run. It changes
-- nothing and answers nothing, as the PostgreSQL statement answers nothing.
--
-- :limit  unused
UPDATE events SET event_id = event_id WHERE 0 AND :limit IS NULL
