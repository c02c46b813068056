-- ingest_read_accounts: what a batch ingest that names a used key reads besides the
-- account rows, once ingest_lock_accounts holds every lock: under READ COMMITTED this
-- statement's snapshot postdates every lock wait, so it sees what another transaction
-- committed meanwhile. Per account: its allowance pockets, its open jobs and the
-- idempotency records of the keys named for it. (A call whose keys are all new does not
-- run it: its write reads the pockets and open jobs for the answers.)
--
-- :account_ids  the locked accounts, as a JSON array of strings
-- :keys         the keys whose records to read, as a JSON array of [account_id, key]
WITH account AS (
    SELECT account_id, ordinality AS n
      FROM jsonb_array_elements_text(:account_ids::jsonb) WITH ORDINALITY AS a(account_id, ordinality)
),
named_key AS (
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
SELECT account.account_id,
       (SELECT COALESCE(json_agg(json_build_array(pocket, remaining, held, cycle_started_at) ORDER BY pocket), '[]')::text
          FROM allowances WHERE allowances.account_id = account.account_id) AS allowances,
       (SELECT COUNT(*) FROM jobs
         WHERE jobs.account_id = account.account_id
           AND status IN ('queued', 'in_progress')) AS open_jobs,
       COALESCE(found_keys.keys, '[]') AS keys
  FROM account
  LEFT JOIN found_keys ON found_keys.account_id = account.account_id
 ORDER BY account.n
