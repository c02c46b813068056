-- prune_webhook_deliveries: deletes up to :limit webhook deliveries that ended (delivered
-- or dead) before :cutoff, oldest first; pending ones stay. (The write transaction holds
-- the database's write lock: nothing queues a delivery again meanwhile.)
--
-- :cutoff  deliveries that ended before this time go (micros)
-- :limit   at most this many
DELETE FROM webhook_deliveries
WHERE delivery_id IN (
    SELECT delivery_id
    FROM webhook_deliveries
    WHERE status IN ('delivered', 'dead') AND finished_at < :cutoff
    ORDER BY finished_at
    LIMIT :limit
)
