-- webhook_mark_delivered: records a delivered event and counts its attempt, if the lease
-- is still the caller's (changes no row otherwise).
--
-- :delivery_id  the delivery
-- :lease_token  the caller's lease token
-- :now_micros   the database clock: when it was delivered
UPDATE webhook_deliveries
SET attempts = attempts + 1,
    status = 'delivered',
    finished_at = :now_micros,
    lease_token = NULL,
    lease_until = NULL,
    last_error = NULL
WHERE delivery_id = :delivery_id
  AND lease_token = :lease_token
  AND status = 'pending'
