-- list_api_keys: every API key, revoked ones too, oldest first (never the hash).
SELECT key_id, role, created_at, revoked_at
FROM api_keys
ORDER BY created_at
