-- write_money: one change of the money pocket under the client's key, in ONE
-- statement: the ledger entry that carries the key, then the account row from it — or
-- nothing at all when the key is taken already, by a money change (the entry's insert
-- meets ledger_by_key: ON CONFLICT DO NOTHING) or a job submit (idempotency): entry_id
-- is then NULL, and the caller looks the key up. It runs after the
-- account's lock, and every write of a key holds its account's lock, so its snapshot
-- sees every key the account has.
-- The key is never looked up here by a query the planner could misplan: a generic plan
-- made while the ledger was small once read ledger_by_account for it, every entry of a
-- hot account per debit (issue #43's debit-hot); the unique index checks it on insert.
-- A debit is not written here: every debit goes through ingest_write, whose account
-- update carries the buffer check (a credit or a refund of a top-up has none).
--
-- :account_id           the account
-- :key                  the client's idempotency key
-- :kind                 the operation and the entry's kind: top_up, bonus, refund
-- :request_hash         the hash of the normalised request, for replays (16 hex digits)
-- :delta_micros         the signed change of the balance
-- :credited_micros      how much total_credited grows
-- :spent_micros         how much total_spent grows
-- :suspended_at         suspended_at after the change (the decision's)
-- :amount_after         the balance after, as decided
-- :available_after      balance minus held after, as decided
-- :buffer_micros        the buffer recorded on the entry
-- :reference            the entry's reference (a job, a top-up's entry), or NULL
-- :now                  the time (database clock, micros)
-- :actor                who caused it (see migration 0007)
-- :blocks               the credit blocks it moved, JSON text, or NULL (migration 0018)
WITH new_entry AS (
    INSERT INTO ledger (account_id, pocket, delta, kind, amount_after, available_after, buffer, ref,
                        created_at, actor, idempotency_key, request_hash, blocks)
    SELECT :account_id, 'money', :delta_micros, :kind, :amount_after, :available_after,
           :buffer_micros, :reference, :now, :actor, :key, :request_hash, :blocks
     WHERE NOT EXISTS (SELECT 1 FROM idempotency WHERE account_id = :account_id AND key = :key)
    ON CONFLICT (account_id, idempotency_key) WHERE idempotency_key IS NOT NULL DO NOTHING
    RETURNING entry_id
),
changed_account AS (
    UPDATE accounts
       SET balance = balance + :delta_micros,
           total_credited = total_credited + :credited_micros,
           total_spent = total_spent + :spent_micros,
           suspended_at = :suspended_at
     WHERE account_id = :account_id
       AND EXISTS (SELECT 1 FROM new_entry)
    RETURNING balance
)
SELECT (SELECT entry_id FROM new_entry) AS entry_id,
       (SELECT balance FROM changed_account) AS balance_after,
       (SELECT COALESCE(json_agg(json_build_array(pocket, remaining, held, cycle_started_at)), '[]')::text
          FROM allowances WHERE account_id = :account_id) AS allowances,
       (SELECT COUNT(*) FROM jobs
         WHERE account_id = :account_id AND status IN ('queued', 'in_progress')) AS open_jobs,
       NULL::text AS keys
