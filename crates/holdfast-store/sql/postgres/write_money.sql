-- write_money: one change of the money pocket under the client's key, in ONE
-- statement: the account row and the ledger entry that carries the key — or nothing at
-- all when the key is taken already, by a money change (on its ledger entry) or a job
-- submit (idempotency): key_free is then 0 and the caller looks the key up. It runs
-- after the account's lock, and every write of a key holds its account's lock, so its
-- snapshot sees every key the account has.
-- A guarded debit carries its buffer check here too, so a wrong decision writes no
-- balance and no entry: with key_free 1, no entry means the guard refused, and the
-- caller fails the transaction.
--
-- :account_id           the account
-- :key                  the client's idempotency key
-- :kind                 the operation and the entry's kind: top_up, bonus, debit, refund
-- :request_hash         the hash of the normalised request, for replays (16 hex digits)
-- :delta_micros         the signed change of the balance
-- :credited_micros      how much total_credited grows
-- :spent_micros         how much total_spent grows
-- :suspended_at         suspended_at after the change (the decision's)
-- :guard_micros         for a guarded debit the buffer (the row is written only while
--                       balance - held + delta >= -buffer); NULL for no guard
-- :amount_after         the balance after, as decided
-- :available_after      balance minus held after, as decided
-- :buffer_micros        the buffer recorded on the entry
-- :reference            the entry's reference (a job, a top-up's entry), or NULL
-- :now                  the time (database clock, micros)
-- :actor                who caused it (see migration 0007)
WITH free_key AS (
    SELECT 1
     WHERE NOT EXISTS (SELECT 1 FROM idempotency_keys WHERE account_id = :account_id AND key = :key)
),
changed_account AS (
    UPDATE accounts
       SET balance = balance + :delta_micros,
           total_credited = total_credited + :credited_micros,
           total_spent = total_spent + :spent_micros,
           suspended_at = :suspended_at
     WHERE account_id = :account_id
       AND EXISTS (SELECT 1 FROM free_key)
       AND (:guard_micros::bigint IS NULL OR balance - held + :delta_micros >= -:guard_micros::bigint)
    RETURNING balance
),
new_entry AS (
    INSERT INTO ledger (account_id, pocket, delta, kind, amount_after, available_after, buffer, ref,
                        created_at, actor, idempotency_key, request_hash)
    SELECT :account_id, 'money', :delta_micros, :kind, :amount_after, :available_after,
           :buffer_micros, :reference, :now, :actor, :key, :request_hash
      FROM changed_account
    RETURNING entry_id
)
SELECT (SELECT COUNT(*) FROM free_key) AS key_free,
       (SELECT entry_id FROM new_entry) AS entry_id,
       (SELECT balance FROM changed_account) AS balance_after,
       (SELECT COALESCE(json_agg(json_build_array(pocket, remaining, held, cycle_started_at)), '[]')::text
          FROM allowances WHERE account_id = :account_id) AS allowances,
       (SELECT COUNT(*) FROM jobs
         WHERE account_id = :account_id AND status IN ('queued', 'in_progress')) AS open_jobs
