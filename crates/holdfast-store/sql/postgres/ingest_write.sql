-- ingest_write: the debits of a batch ingest that were decided to apply, in ONE
-- statement: each debit's ledger entry (which carries its key), and each account's row
-- once (the sum of its debits). Every account row carries its guard: it is written only
-- when the balance it ends at is the one decided and stays within the buffer, so a wrong
-- decision leaves a count short, which the caller reports as corruption (rolled back).
-- It answers the counts, with the allowance pockets and open jobs of the accounts the
-- lock statement could not read them for (:stale_accounts: their row changed while it
-- waited; see ingest_lock_accounts), read here, where the snapshot postdates every lock
-- wait (a debit changes neither): one row per such account, or one row of counts alone
-- when there is none. The pockets in no order: the answer keys them by name.
--
-- The keys are claimed by a plain INSERT: a key some earlier money change used fails
-- the statement with a unique violation (ledger_by_key), and the caller rolls back and
-- redoes the call reading its keys first. (ON CONFLICT DO NOTHING would probe the index
-- once more per key, to spare an error that a retry almost never meets.) A key a job
-- submit used is in idempotency: keys_claimed counts the debits whose key is not, and a
-- count short of the batch has the caller roll back and redo it the same way.
--
-- The items and changes come as columns, one array per field, all of one length and in
-- the same order, bound as arrays (nothing to parse, unlike a JSON document):
-- :account_ids, :keys, :request_hashes, :entry_ids, :deltas, :amounts_after,
-- :availables_after, :buffers, :refs, :nows (the database clock as the account was
-- read, micros: the entry's time), :actors (who asked for each: a batch carries several
-- callers' debits; see migration 0007), :meters, :seconds (what a metered debit used,
-- or NULL)   the debits
-- :stale_accounts  the accounts whose pockets and open jobs to read, an array of text
-- :change_accounts, :change_deltas (the sum of its debits), :change_spent,
-- :change_suspended_at (after the last), :change_balances_after, :change_buffers
--           the accounts
WITH item AS (
    SELECT *
      FROM unnest(:account_ids::text[], :keys::text[], :request_hashes::text[],
                  :entry_ids::bigint[], :deltas::bigint[], :amounts_after::bigint[],
                  :availables_after::bigint[], :buffers::bigint[], :refs::text[],
                  :nows::bigint[], :actors::text[], :meters::text[], :seconds::bigint[])
           AS item(account_id, key, request_hash, entry_id, delta, amount_after,
                   available_after, buffer, ref, now, actor, meter, seconds)
),
change AS (
    SELECT *
      FROM unnest(:change_accounts::text[], :change_deltas::bigint[],
                  :change_spent::bigint[], :change_suspended_at::bigint[],
                  :change_balances_after::bigint[], :change_buffers::bigint[])
           AS change(account_id, delta, spent, suspended_at, balance_after, buffer)
),
new_entry AS (
    INSERT INTO ledger (entry_id, account_id, pocket, delta, kind, amount_after, available_after,
                        buffer, ref, created_at, actor, idempotency_key, request_hash, meter,
                        seconds)
    OVERRIDING SYSTEM VALUE
    SELECT entry_id, account_id, 'money', delta, 'debit', amount_after, available_after,
           buffer, ref, now, actor, key, request_hash, meter, seconds
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
       stale.account_id,
       (SELECT COALESCE(json_agg(json_build_array(pocket, remaining, held, cycle_started_at)), '[]')::text
          FROM allowances WHERE allowances.account_id = stale.account_id) AS allowances,
       (SELECT COUNT(*) FROM jobs
         WHERE jobs.account_id = stale.account_id
           AND status IN ('queued', 'in_progress')) AS open_jobs,
       NULL::text AS keys
  FROM (SELECT (SELECT COUNT(*) FROM item
                  WHERE NOT EXISTS (SELECT 1 FROM idempotency
                                     WHERE idempotency.account_id = item.account_id
                                       AND idempotency.key = item.key)) AS keys_claimed,
               (SELECT COUNT(*) FROM new_entry) AS entries_written,
               (SELECT COUNT(*) FROM changed_account) AS accounts_changed) AS counts
  LEFT JOIN unnest(:stale_accounts::text[]) AS stale(account_id) ON true
