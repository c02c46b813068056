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
-- Each named key is read by its own probe of the primary key: a correlated sub-query,
-- which the planner never turns into a join. Written as a join, it was planned as a hash
-- join over a sequential scan of the WHOLE idempotency table whenever the table's
-- statistics said it was small (seen: every batch scanning every key ever stored, so
-- batches slowed as the table grew).
found_key AS MATERIALIZED (
    SELECT named_key.account_id,
           (SELECT json_build_array(i.key, i.operation, i.request_hash, i.entry_id, i.job_id)
              FROM idempotency_keys i
             WHERE i.account_id = named_key.account_id AND i.key = named_key.key) AS record
      FROM named_key
),
found_keys AS (
    SELECT account_id, json_agg(record)::text AS keys
      FROM found_key
     WHERE record IS NOT NULL
     GROUP BY account_id
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
