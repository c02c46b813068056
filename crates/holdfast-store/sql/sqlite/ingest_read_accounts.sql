-- ingest_read_accounts: the accounts of a batch ingest, each with the database clock,
-- its allowance pockets, its open jobs and the idempotency records of the keys the batch
-- names for it.
--
-- :account_ids  the accounts, as a JSON array of strings
-- :keys         the keys named, as a JSON array of [account_id, key] pairs
WITH named_key AS (
    SELECT json_extract(value, '$[0]') AS account_id, json_extract(value, '$[1]') AS key
      FROM json_each(:keys)
),
-- CROSS JOIN keeps the named keys outside: one primary-key lookup per key, never a
-- scan of every key an account ever used.
found_keys AS (
    SELECT i.account_id,
           json_group_array(json_array(i.key, i.operation, i.request_hash, i.entry_id, i.job_id)) AS keys
      FROM named_key
     CROSS JOIN idempotency i
     WHERE i.account_id = named_key.account_id AND i.key = named_key.key
     GROUP BY i.account_id
)
SELECT accounts.*,
       CAST((julianday('now') - 2440587.5) * 86400000000 AS INTEGER) AS now,
       (SELECT json_group_array(json_array(pocket, remaining, held, cycle_started_at))
          FROM allowances WHERE allowances.account_id = accounts.account_id) AS allowances,
       (SELECT COUNT(*) FROM jobs
         WHERE jobs.account_id = accounts.account_id
           AND status IN ('queued', 'in_progress')) AS open_jobs,
       COALESCE(found_keys.keys, '[]') AS keys
  FROM accounts
  LEFT JOIN found_keys ON found_keys.account_id = accounts.account_id
 WHERE accounts.account_id IN (SELECT value FROM json_each(:account_ids))
 ORDER BY accounts.account_id
