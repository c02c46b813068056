-- webhook_record_failed_attempt: records a failed attempt and counts it, if the lease is
-- still the caller's (no row otherwise): the delivery is dead when this was the last
-- attempt, else pending again, due at the retry time.
--
-- :delivery_id             the delivery
-- :lease_token             the caller's lease token
-- :max_attempts            attempts allowed; at this many the delivery is dead
-- :now_micros              the database clock: when it died, if it did
-- :next_attempt_at_micros  when the next attempt is due
-- :last_error              what went wrong (truncated)
UPDATE webhook_deliveries
SET attempts = attempts + 1,
    status = CASE WHEN attempts + 1 >= :max_attempts THEN 'dead' ELSE 'pending' END,
    finished_at = CASE WHEN attempts + 1 >= :max_attempts THEN CAST(:now_micros AS BIGINT) ELSE NULL END,
    next_attempt_at = :next_attempt_at_micros,
    lease_token = NULL,
    lease_until = NULL,
    last_error = :last_error
WHERE delivery_id = :delivery_id
  AND lease_token = :lease_token
  AND status = 'pending'
RETURNING status, next_attempt_at
