-- count_live_api_keys: how many keys are not revoked.
SELECT COUNT(*) AS n
FROM api_keys
WHERE revoked_at IS NULL
