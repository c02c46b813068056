-- create_api_key: stores a new API key by the hex SHA-256 of its secret (the secret
-- itself is never stored).
--
-- :key_id             the new key's id (key_...)
-- :role               what the key may do (admin, service, worker)
-- :key_hash           hex SHA-256 of the key
-- :created_at_micros  when it was created
INSERT INTO api_keys (key_id, role, key_hash, created_at)
VALUES (:key_id, :role, :key_hash, :created_at_micros)
