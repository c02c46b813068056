-- lock_event_sequencer: makes this transaction the one sequencer of the events feed
-- until it ends (an advisory lock of this database; "holdfast events" in hex).
SELECT pg_advisory_xact_lock(7526676346829271923) AS locked
