-- webhook_dead_deliveries: dead deliveries after a delivery id, oldest first, with their
-- event's type, optionally of one endpoint.
--
-- :after_delivery_id  the cursor: the last delivery already read (0 = from the start)
-- :endpoint           only deliveries to this endpoint (NULL = every endpoint)
-- :limit              at most this many deliveries
SELECT delivery.delivery_id, delivery.event_id, event.type, delivery.endpoint,
       delivery.account_id, delivery.attempts, delivery.last_error,
       delivery.created_at, delivery.finished_at
FROM webhook_deliveries AS delivery
JOIN events AS event ON event.event_id = delivery.event_id
WHERE delivery.status = 'dead'
  AND delivery.delivery_id > :after_delivery_id
  AND (:endpoint::text IS NULL OR delivery.endpoint = :endpoint)
ORDER BY delivery.delivery_id
LIMIT :limit
