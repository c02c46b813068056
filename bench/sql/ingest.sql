-- The `ingest` floor of holdfast-bench (crates/holdfast-bench/src/floor.rs,
-- FloorPool::ingest, INGEST_PG and LOCK_PG) for pgbench: a batch of :batch debits of
-- 100 micros over random accounts, set-based in one transaction: lock the accounts in
-- sorted order, then ONE statement that aggregates per account, guards and updates each
-- account once, and writes every ledger entry with its key and request hash (one row per
-- debit: the schema since issue #43).
-- Variables (pgbench -D): accounts = how many accounts b0…b{accounts-1} there are;
-- batch = debits per call (holdfast-bench --ingest-batch); now = micros since the epoch.
-- Two differences from the bench: pgbench cannot build a list of random accounts, so a
-- first statement (outside the transaction, one more round trip) draws the batch; and it
-- cannot bind an array, so the batch's columns (accounts, keys, and the sorted distinct
-- accounts) come back as array literals that the statements cast to text[] (the bench
-- binds the same arrays in binary, nothing to parse). Their cost is in pgbench's
-- figures, not in the bench floor's.
\set key random(1, 9000000000000000000)
WITH drawn AS (
  SELECT 'b' || floor(random() * CAST(:accounts AS bigint))::bigint AS account_id,
         'pgbench-' || :key || '-' || g AS key
    FROM generate_series(1, CAST(:batch AS int)) AS g)
SELECT array_agg(account_id)::text AS accts, array_agg(key)::text AS keys,
       (SELECT array_agg(DISTINCT d.account_id ORDER BY d.account_id) FROM drawn d)::text AS ids
  FROM drawn \gset
BEGIN;
SELECT account_id FROM accounts
 WHERE account_id = ANY (CAST(:ids AS text[]))
 ORDER BY account_id FOR UPDATE;
WITH item AS (
    SELECT t.account_id, t.key, nextval('ledger_entry_id_seq') AS entry_id
      FROM unnest(CAST(:accts AS text[]), CAST(:keys AS text[])) AS t(account_id, key)),
  per_account AS (
    SELECT account_id, COUNT(*) * 100::bigint AS amount FROM item GROUP BY account_id),
  changed AS (
    UPDATE accounts a SET balance = a.balance - p.amount, total_spent = a.total_spent + p.amount
      FROM per_account p WHERE a.account_id = p.account_id
       AND a.account_id = ANY (ARRAY(SELECT account_id FROM per_account))
       AND a.balance - a.held - p.amount >= -1000000::bigint
    RETURNING a.account_id, a.balance, a.held),
  entries AS (
    INSERT INTO ledger (entry_id, account_id, pocket, delta, kind, amount_after, available_after, buffer, ref,
                        created_at, idempotency_key, request_hash, meter, seconds)
    OVERRIDING SYSTEM VALUE
    SELECT i.entry_id, i.account_id, 'money', -100::bigint, 'debit', c.balance, c.balance - c.held,
           1000000::bigint, NULL, CAST(:now AS bigint), i.key, '0000000000000000', 'linux-small', 1
      FROM item i JOIN changed c ON c.account_id = i.account_id RETURNING 1)
SELECT (SELECT COUNT(*) FROM entries) AS entries;
COMMIT;
