-- webhook_claim_due_deliveries: leases an endpoint's due deliveries that are the head of
-- their account's queue (no earlier delivery of the account to the endpoint is still
-- pending). The attempt is counted when its outcome is recorded, not here: a claimer
-- that dies mid-attempt costs no attempt.
--
-- :endpoint            the webhook endpoint (its URL)
-- :now_micros          the database clock
-- :lease_token         the claimer's lease token
-- :lease_until_micros  when the lease runs out
-- :limit               at most this many deliveries
WITH due_queue_head AS (
  SELECT due.delivery_id
  FROM webhook_deliveries AS due
  WHERE due.endpoint = :endpoint
    AND due.status = 'pending'
    AND due.next_attempt_at <= :now_micros
    AND (due.lease_until IS NULL OR due.lease_until <= :now_micros)
    AND NOT EXISTS (
      SELECT 1
      FROM webhook_deliveries AS earlier
      WHERE earlier.endpoint = due.endpoint
        AND earlier.account_id = due.account_id
        AND earlier.status = 'pending'
        AND earlier.delivery_id < due.delivery_id
    )
  ORDER BY due.delivery_id
  LIMIT :limit
)
UPDATE webhook_deliveries
SET lease_token = :lease_token,
    lease_until = :lease_until_micros
WHERE delivery_id IN (SELECT delivery_id FROM due_queue_head)
RETURNING delivery_id, event_id, attempts
