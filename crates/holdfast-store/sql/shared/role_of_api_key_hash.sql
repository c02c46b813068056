-- role_of_api_key_hash: the role and id of the unrevoked key with this hash, if any.
--
-- :key_hash  hex SHA-256 of the key presented
SELECT role, key_id
FROM api_keys
WHERE key_hash = :key_hash
  AND revoked_at IS NULL
