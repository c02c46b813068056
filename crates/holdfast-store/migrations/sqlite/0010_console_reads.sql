-- The console's reads on a big database (issue #14, BENCHMARKS.md "Console pages on a big
-- database"): a job's events by the job (an account with many events made job_events
-- scan them all), and an account's newest jobs by an index (the listing sorted every job
-- of the account). Not a lane's newest jobs of any status: an index on (lane, created_at)
-- is what the lease would then read instead of jobs_queue (tests/lanes.rs).
CREATE INDEX events_by_job ON events (job_id, event_id) WHERE job_id IS NOT NULL;
CREATE INDEX jobs_by_account_newest ON jobs (account_id, created_at, job_id);
