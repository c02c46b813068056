-- webhook_redeliver: queues a dead (or delivered) delivery again with fresh attempts,
-- due now; changes no row when there is none or it is still pending.
--
-- :event_id    the outbox event
-- :endpoint    the webhook endpoint (its URL)
-- :now_micros  the database clock: due now
UPDATE webhook_deliveries
SET status = 'pending',
    attempts = 0,
    next_attempt_at = :now_micros,
    lease_token = NULL,
    lease_until = NULL,
    finished_at = NULL
WHERE event_id = :event_id
  AND endpoint = :endpoint
  AND status IN ('dead', 'delivered')
