-- ingest_read_accounts: the locked accounts of a batch ingest, each with the database
-- clock, its allowance pockets, its open jobs and the idempotency records of the keys
-- the batch names for it. Runs after ingest_lock_accounts, so it reads them current.
--
-- :account_ids  the accounts, as a JSON array of strings
-- :keys         the keys named, as a JSON array of [account_id, key] pairs
WITH named_key AS (
    SELECT pair->>0 AS account_id, pair->>1 AS key
      FROM jsonb_array_elements(:keys::jsonb) AS pair
),
found_keys AS (
    SELECT i.account_id,
           json_agg(json_build_array(i.key, i.operation, i.request_hash, i.entry_id, i.job_id))::text AS keys
      FROM named_key
      JOIN idempotency i ON i.account_id = named_key.account_id AND i.key = named_key.key
     GROUP BY i.account_id
)
SELECT accounts.*,
       (extract(epoch from clock_timestamp()) * 1000000)::bigint AS now,
       (SELECT COALESCE(json_agg(json_build_array(pocket, remaining, held, cycle_started_at) ORDER BY pocket), '[]')::text
          FROM allowances WHERE allowances.account_id = accounts.account_id) AS allowances,
       (SELECT COUNT(*) FROM jobs
         WHERE jobs.account_id = accounts.account_id
           AND status IN ('queued', 'in_progress')) AS open_jobs,
       COALESCE(found_keys.keys, '[]') AS keys
  FROM accounts
  LEFT JOIN found_keys ON found_keys.account_id = accounts.account_id
 WHERE accounts.account_id = ANY (ARRAY(SELECT jsonb_array_elements_text(:account_ids::jsonb)))
 ORDER BY accounts.account_id
