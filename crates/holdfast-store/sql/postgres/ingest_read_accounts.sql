-- ingest_read_accounts: what a batch ingest reads besides the account rows, once
-- ingest_lock_accounts holds every lock: under READ COMMITTED this statement's snapshot
-- postdates every lock wait, so it sees what another transaction committed meanwhile.
-- Per account: the database clock (the time of its entries), its allowance pockets, its
-- open jobs and the idempotency records of the keys named for it. On the first row only:
-- the ledger entry ids of the call, taken from the ledger's sequence in increasing order
-- under the locks (taken before them, another transaction's entry on one of these
-- accounts could get a higher id yet commit first, and the ledger's order would not be
-- the order of application; an id not used is a gap, as after any rolled-back insert).
--
-- :account_ids  the locked accounts, as a JSON array of strings
-- :keys         the keys whose records to read, as a JSON array of [account_id, key]
--               pairs ('[]' when the write claims the keys without reading them first)
-- :count        how many ledger entry ids to take
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
),
-- A volatile CTE runs once, whatever refers to it.
entry_id AS (
    SELECT nextval('ledger_entry_id_seq') AS entry_id
      FROM generate_series(1, :count::bigint)
)
SELECT account.account_id,
       (extract(epoch from clock_timestamp()) * 1000000)::bigint AS now,
       (SELECT COALESCE(json_agg(json_build_array(pocket, remaining, held, cycle_started_at) ORDER BY pocket), '[]')::text
          FROM allowances WHERE allowances.account_id = account.account_id) AS allowances,
       (SELECT COUNT(*) FROM jobs
         WHERE jobs.account_id = account.account_id
           AND status IN ('queued', 'in_progress')) AS open_jobs,
       COALESCE(found_keys.keys, '[]') AS keys,
       CASE WHEN account.n = 1
            THEN (SELECT COALESCE(string_agg(entry_id::text, ',' ORDER BY entry_id), '') FROM entry_id)
       END AS entry_ids
  FROM account
  LEFT JOIN found_keys ON found_keys.account_id = account.account_id
 ORDER BY account.n
