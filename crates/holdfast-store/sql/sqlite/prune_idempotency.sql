-- prune_idempotency: deletes up to :limit idempotency records made before :cutoff, oldest
-- first. A key replayed after its record is gone is a new request. By rowid: a second
-- condition on the outer DELETE would have SQLite scan every old record per chunk.
--
-- :cutoff  records made before this time go (micros)
-- :limit   at most this many
DELETE FROM idempotency
WHERE rowid IN (
    SELECT rowid
    FROM idempotency
    WHERE created_at < :cutoff
    ORDER BY created_at
    LIMIT :limit
)
