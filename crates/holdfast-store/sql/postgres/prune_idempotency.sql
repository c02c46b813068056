-- prune_idempotency: deletes up to :limit idempotency records made before :cutoff, oldest
-- first. A key replayed after its record is gone is a new request.
--
-- :cutoff  records made before this time go (micros)
-- :limit   at most this many
DELETE FROM idempotency
WHERE created_at < :cutoff
  AND (account_id, key) IN (
    SELECT account_id, key
    FROM idempotency
    WHERE created_at < :cutoff
    ORDER BY created_at
    LIMIT :limit
  )
