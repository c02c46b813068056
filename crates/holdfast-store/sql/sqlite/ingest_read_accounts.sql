-- ingest_read_accounts: what a batch ingest reads besides the account rows: per account
-- the database clock, its allowance pockets, its open jobs and the idempotency records
-- of the keys named for it; on the first row only, the ledger entry ids of the call: the
-- next ones after the largest the ledger ever gave (AUTOINCREMENT's sqlite_sequence; the
-- write transaction holds the database's write lock, so nothing else takes them).
--
-- :account_ids  the accounts, as a JSON array of strings
-- :keys         the keys whose records to read, as a JSON array of [account_id, key]
--               pairs ('[]' when the write claims the keys without reading them first)
-- :count        how many ledger entry ids to take
WITH RECURSIVE account AS (
    SELECT value AS account_id, key AS n
      FROM json_each(:account_ids)
),
named_key AS (
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
),
n(i) AS (
    SELECT 1 WHERE :count >= 1
    UNION ALL
    SELECT i + 1 FROM n WHERE i < :count
)
SELECT account.account_id,
       CAST((julianday('now') - 2440587.5) * 86400000000 AS INTEGER) AS now,
       (SELECT json_group_array(json_array(pocket, remaining, held, cycle_started_at))
          FROM allowances WHERE allowances.account_id = account.account_id) AS allowances,
       (SELECT COUNT(*) FROM jobs
         WHERE jobs.account_id = account.account_id
           AND status IN ('queued', 'in_progress')) AS open_jobs,
       COALESCE(found_keys.keys, '[]') AS keys,
       CASE WHEN account.n = 0
            THEN (SELECT COALESCE(group_concat(
                            COALESCE((SELECT seq FROM sqlite_sequence WHERE name = 'ledger'), 0) + i, ','), '')
                    FROM n)
       END AS entry_ids
  FROM account
  LEFT JOIN found_keys ON found_keys.account_id = account.account_id
 ORDER BY account.n
