-- ingest_write: the debits of a batch ingest that were decided to apply, in ONE
-- statement: each debit's idempotency record and ledger entry, and each account's row
-- once (the sum of its debits). Every account row carries its guard: it is written only
-- when the balance it ends at is the one decided and stays within the buffer, so a wrong
-- decision leaves a count short, which the caller reports as corruption (rolled back).
-- One row per changed account, each with the counts, and the account's allowance
-- pockets and open jobs for the answers (this statement's snapshot postdates every lock
-- wait; a debit changes neither).
--
-- :items    the debits, a JSON array of objects: account_id, key, request_hash,
--           entry_id, delta, amount_after, available_after, buffer, ref, now (the
--           database clock as the account was read, micros: the entry's time)
-- :actor    who caused it (see migration 0007): one call, one caller
-- :changes  the accounts, a JSON array of objects: account_id, delta (the sum of its
--           debits), spent, suspended_at (after the last), balance_after, buffer
WITH item AS (
    SELECT *
      FROM jsonb_to_recordset(:items::jsonb) AS item(
           account_id text, key text, request_hash text, entry_id bigint, delta bigint,
           amount_after bigint, available_after bigint, buffer bigint, ref text, now bigint)
),
change AS (
    SELECT *
      FROM jsonb_to_recordset(:changes::jsonb) AS change(
           account_id text, delta bigint, spent bigint, suspended_at bigint,
           balance_after bigint, buffer bigint)
),
claimed_key AS (
    INSERT INTO idempotency (account_id, key, operation, request_hash, entry_id, job_id, created_at)
    SELECT account_id, key, 'debit', request_hash, entry_id, NULL, now
      FROM item
    ON CONFLICT (account_id, key) DO NOTHING
    RETURNING 1
),
new_entry AS (
    INSERT INTO ledger (entry_id, account_id, pocket, delta, kind, amount_after, available_after, buffer, ref, created_at, actor)
    OVERRIDING SYSTEM VALUE
    SELECT entry_id, account_id, 'money', delta, 'debit', amount_after, available_after,
           buffer, ref, now, :actor
      FROM item
    RETURNING 1
),
changed_account AS (
    UPDATE accounts
       SET balance = accounts.balance + change.delta,
           total_spent = accounts.total_spent + change.spent,
           suspended_at = change.suspended_at
      FROM change
     WHERE accounts.account_id = change.account_id
       -- the same accounts again as an array: an index scan, not a hash join over all
       AND accounts.account_id = ANY (ARRAY(SELECT account_id FROM change))
       AND accounts.balance + change.delta = change.balance_after
       AND accounts.balance - accounts.held + change.delta >= -change.buffer
    RETURNING 1
)
SELECT counts.*,
       change.account_id,
       (SELECT COALESCE(json_agg(json_build_array(pocket, remaining, held, cycle_started_at) ORDER BY pocket), '[]')::text
          FROM allowances WHERE allowances.account_id = change.account_id) AS allowances,
       (SELECT COUNT(*) FROM jobs
         WHERE jobs.account_id = change.account_id
           AND status IN ('queued', 'in_progress')) AS open_jobs
  FROM (SELECT (SELECT COUNT(*) FROM claimed_key) AS keys_claimed,
               (SELECT COUNT(*) FROM new_entry) AS entries_written,
               (SELECT COUNT(*) FROM changed_account) AS accounts_changed) AS counts
  CROSS JOIN change
