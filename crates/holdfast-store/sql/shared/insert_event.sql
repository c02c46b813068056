-- insert_event: appends an event to the outbox, in the transaction of the change it
-- tells about.
--
-- :event_type  e.g. job.succeeded, account.suspended
-- :account_id  the account
-- :job_id      the job, or NULL
-- :data        the event's data, JSON text
-- :now         the time of the event (database clock, micros)
-- :actor       who caused it (see migration 0007)
INSERT INTO events (type, account_id, job_id, data, created_at, actor)
VALUES (:event_type, :account_id, :job_id, :data, :now, :actor)
