-- ingest_write: the debits of a set-based call (one debit or a thousand) that were
-- decided to apply, in ONE statement: each debit's ledger entry (which carries its key),
-- and each account's row once (the sum of its debits). Every account row carries its
-- guard: it is written only when the balance it ends at is the one decided and stays
-- within the buffer, so a wrong decision leaves accounts_changed short, which the caller
-- reports as corruption (rolled back). It answers the ids of the entries written, in
-- increasing order: the insert takes them from the ledger's sequence as it inserts the
-- items, in their order, so the n-th id is the n-th item's; and every lock is held by
-- now (ingest_lock_accounts), so the ledger's order is the order of application.
--
-- The keys are claimed by the INSERT: a key some earlier money change used fails the
-- statement with a unique violation (ledger_by_key), and the caller rolls back and
-- redoes the call reading its keys first. (ON CONFLICT DO NOTHING would probe the index
-- once more per key, to spare an error that a retry almost never meets.) A key a job
-- submit used is in idempotency: its debit is not inserted, the entries come back short
-- of the items, and the caller rolls back and redoes it the same way.
--
-- The items and changes come as one array of a composite type each (debit_item,
-- account_change: migration 0014), bound as such (nothing to parse), through a
-- sub-select: a generic plan cannot count them, so PostgreSQL plans the statement once
-- per connection, for a call of one debit as for a thousand (docs/bench-history.md,
-- issue #43). The changes also pass `LIMIT (SELECT NULL::bigint)`: no limit, but the
-- planner, not seeing it, estimates a row or so and probes accounts_pkey per change
-- whatever the statistics say.
-- :items    the debits, in the order decided: account_id, key, request_hash, delta,
--           amount_after, available_after, buffer, ref, now (the database clock as the account was read, micros: the entry's time),
--           actor (who asked for it: a batch carries several callers' debits; see
--           migration 0007), meter and seconds (what a metered debit used, or NULL),
--           blocks (the credit blocks it drew from, JSON text, or NULL: migration 0018)
-- :changes  the accounts: account_id, delta (the sum of its debits), spent, suspended_at
--           (after the last), balance_after, buffer, live_blocks (the live credit blocks
--           after the call where it drew from some, else NULL: migration 0019)
-- :blocks   the credit blocks the debits drew from, as each account's last debit left
--           them: a JSON array of {block_id, remaining, held} (`[]` on accounts without
--           blocks)
-- :answered the accounts whose pockets and open jobs the lock could not read current
--           (ingest_lock_accounts' `stale`), an array of text: `extras` lists them as
--           this statement reads them (its snapshot postdates every lock, so they are
--           current; a debit changes neither), for the answers' views
WITH new_entry AS (
    INSERT INTO ledger (account_id, pocket, delta, kind, amount_after, available_after, buffer,
                        ref, created_at, actor, idempotency_key, request_hash, meter, seconds,
                        blocks)
    SELECT account_id, 'money', delta, 'debit', amount_after, available_after, buffer, ref,
           now, actor, key, request_hash, meter, seconds, blocks
      FROM unnest((SELECT :items::debit_item[])) AS item
     WHERE NOT EXISTS (SELECT 1 FROM idempotency
                        WHERE idempotency.account_id = item.account_id
                          AND idempotency.key = item.key
                       OFFSET 0)
    RETURNING entry_id
),
changed_block AS (
    UPDATE credit_blocks
       SET remaining = block.remaining, held = block.held
      FROM (SELECT * FROM json_to_recordset((SELECT :blocks::json))
                       AS written(block_id bigint, remaining bigint, held bigint)
             LIMIT (SELECT NULL::bigint)) AS block
     WHERE credit_blocks.block_id = block.block_id
),
changed_account AS (
    UPDATE accounts
       SET balance = accounts.balance + change.delta,
           total_spent = accounts.total_spent + change.spent,
           suspended_at = change.suspended_at,
           live_blocks = COALESCE(change.live_blocks, accounts.live_blocks)
      FROM (SELECT * FROM unnest((SELECT :changes::account_change[]))
             LIMIT (SELECT NULL::bigint)) AS change
     WHERE accounts.account_id = change.account_id
       AND accounts.balance + change.delta = change.balance_after
       AND accounts.balance - accounts.held + change.delta >= -change.buffer
    RETURNING 1
)
SELECT (SELECT COALESCE(string_agg(entry_id::text, ',' ORDER BY entry_id), '') FROM new_entry) AS entry_ids,
       (SELECT COUNT(*) FROM changed_account) AS accounts_changed,
       (SELECT COALESCE(json_agg(json_build_array(
                   answered.id,
                   (SELECT COALESCE(json_agg(json_build_array(pocket, remaining, held, cycle_started_at)), '[]')
                      FROM allowances WHERE allowances.account_id = answered.id),
                   (SELECT COUNT(*) FROM jobs
                     WHERE jobs.account_id = answered.id
                       AND status IN ('queued', 'in_progress')))), '[]')::text
          FROM unnest((SELECT :answered::text[])) AS answered(id)) AS extras
