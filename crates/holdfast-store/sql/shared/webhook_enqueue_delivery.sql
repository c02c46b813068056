-- webhook_enqueue_delivery: queues one event for one endpoint, due now; nothing when it
-- is already queued.
--
-- :event_id    the outbox event
-- :endpoint    the webhook endpoint (its URL)
-- :account_id  the event's account (deliveries are in order per account)
-- :now_micros  the database clock: created and first due now
INSERT INTO webhook_deliveries (event_id, endpoint, account_id, status, next_attempt_at, created_at)
VALUES (:event_id, :endpoint, :account_id, 'pending', :now_micros, :now_micros)
ON CONFLICT (event_id, endpoint) DO NOTHING
