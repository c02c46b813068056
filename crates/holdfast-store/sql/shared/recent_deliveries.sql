-- recent_deliveries: the newest webhook deliveries, whatever their status.
--
-- :limit  at most this many
SELECT delivery.delivery_id, delivery.event_id, delivery.endpoint, delivery.account_id,
       delivery.status, delivery.attempts, delivery.last_error, delivery.created_at,
       delivery.finished_at, event.type AS event_type
  FROM webhook_deliveries AS delivery
  LEFT JOIN events AS event ON event.event_id = delivery.event_id
 ORDER BY delivery.delivery_id DESC
 LIMIT :limit
