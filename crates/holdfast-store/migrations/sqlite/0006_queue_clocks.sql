-- A queued job's wait clock: when its wait (re)started — at submit, and again when its
-- account's suspension cleared (a suspended account's queue waits; its time suspended
-- does not count toward queued_expires_after_seconds or the stale deadline).
ALTER TABLE jobs ADD COLUMN queued_since INTEGER;
UPDATE jobs SET queued_since = created_at;
