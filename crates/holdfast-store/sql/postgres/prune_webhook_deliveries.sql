-- prune_webhook_deliveries: deletes up to :limit webhook deliveries that ended (delivered
-- or dead) before :cutoff, oldest first; pending ones stay. The status is checked again on
-- the row deleted, so a delivery queued again (redelivered) meanwhile stays.
--
-- :cutoff  deliveries that ended before this time go (micros)
-- :limit   at most this many
DELETE FROM webhook_deliveries
WHERE status IN ('delivered', 'dead')
  AND finished_at < :cutoff
  AND delivery_id IN (
    SELECT delivery_id
    FROM webhook_deliveries
    WHERE status IN ('delivered', 'dead') AND finished_at < :cutoff
    ORDER BY finished_at
    LIMIT :limit
  )
