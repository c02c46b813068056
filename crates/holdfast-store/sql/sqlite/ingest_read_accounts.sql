-- ingest_read_accounts: the idempotency records of the keys a batch ingest names, per
-- account, with its allowance pockets and open jobs (read again: the same as the lock
-- statement read, as the write lock is held), for a call that names a used key.
--
-- :account_ids  the accounts, as a JSON array of strings
-- :keys         the keys whose records to read, as a JSON array of [account_id, key]
WITH account AS (
    SELECT value AS account_id, key AS n
      FROM json_each(:account_ids)
),
named_key AS (
    SELECT json_extract(value, '$[0]') AS account_id, json_extract(value, '$[1]') AS key
      FROM json_each(:keys)
),
-- CROSS JOIN keeps the named keys outside: one index lookup per key in each place a key
-- lives (idempotency, ledger_by_key), never a scan of every key an account ever used (the
-- view idempotency_keys is read whole when joined: SQLite does not push the join in).
found AS (
    SELECT i.account_id,
           json_array(i.key, i.operation, i.request_hash, i.entry_id, i.job_id) AS record
      FROM named_key
     CROSS JOIN idempotency i
     WHERE i.account_id = named_key.account_id AND i.key = named_key.key
    UNION ALL
    SELECT l.account_id,
           json_array(l.idempotency_key, l.kind, l.request_hash, l.entry_id, NULL)
      FROM named_key
     CROSS JOIN ledger l
     WHERE l.account_id = named_key.account_id AND l.idempotency_key = named_key.key
),
found_keys AS (
    SELECT account_id, json_group_array(json(record)) AS keys
      FROM found
     GROUP BY account_id
)
SELECT account.account_id,
       (SELECT json_group_array(json_array(pocket, remaining, held, cycle_started_at))
          FROM allowances WHERE allowances.account_id = account.account_id) AS allowances,
       (SELECT COUNT(*) FROM jobs
         WHERE jobs.account_id = account.account_id
           AND status IN ('queued', 'in_progress')) AS open_jobs,
       COALESCE(found_keys.keys, '[]') AS keys
  FROM account
  LEFT JOIN found_keys ON found_keys.account_id = account.account_id
 ORDER BY account.n
