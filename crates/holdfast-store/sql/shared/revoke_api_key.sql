-- revoke_api_key: revokes a live key; changes no row when there is no live key with
-- this id.
--
-- :key_id            the key
-- :revoked_at_micros when it is revoked (now)
UPDATE api_keys
SET revoked_at = :revoked_at_micros
WHERE key_id = :key_id
  AND revoked_at IS NULL
