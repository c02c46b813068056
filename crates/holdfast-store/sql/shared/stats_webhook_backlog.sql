-- stats_webhook_backlog: per endpoint, deliveries still pending and dead, and how long
-- the oldest pending one has waited since it was queued.
--
-- :now_micros  the database clock
SELECT endpoint,
       CAST(SUM(CASE WHEN status = 'pending' THEN 1 ELSE 0 END) AS BIGINT) AS pending,
       CAST(SUM(CASE WHEN status = 'dead' THEN 1 ELSE 0 END) AS BIGINT) AS dead,
       CAST(COALESCE(:now_micros - MIN(CASE WHEN status = 'pending' THEN created_at END), 0)
            AS BIGINT) AS oldest_pending_micros
FROM webhook_deliveries
WHERE status IN ('pending', 'dead')
GROUP BY endpoint
ORDER BY endpoint
