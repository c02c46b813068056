-- write_money: one change of the money pocket under the client's key, in ONE
-- statement: the key's record, the account row and the ledger entry — or nothing at
-- all when the key is taken already (claimed_entry_id is then NULL and the caller
-- looks the key up). ON CONFLICT DO NOTHING rather than a failing insert: an error
-- would abort the whole transaction, and with it a batch of debits.
-- A guarded debit carries its buffer check here too, so a wrong decision writes no
-- balance: balance_after is then NULL and the caller fails the transaction.
-- It also reads the pockets and open jobs for the answer (it runs after the lock); the
-- pockets in no order, as the answer keys them by name.
--
-- :account_id           the account
-- :key                  the client's idempotency key
-- :kind                 the operation and the entry's kind: top_up, bonus, debit, refund
-- :request_hash         the hash of the normalised request, for replays
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
WITH claimed_key AS (
    INSERT INTO idempotency (account_id, key, operation, request_hash, entry_id, job_id, created_at)
    VALUES (:account_id, :key, :kind, :request_hash, nextval('ledger_entry_id_seq'), NULL, :now)
    ON CONFLICT (account_id, key) DO NOTHING
    RETURNING entry_id
),
changed_account AS (
    UPDATE accounts
       SET balance = balance + :delta_micros,
           total_credited = total_credited + :credited_micros,
           total_spent = total_spent + :spent_micros,
           suspended_at = :suspended_at
     WHERE account_id = :account_id
       AND EXISTS (SELECT 1 FROM claimed_key)
       AND (:guard_micros::bigint IS NULL OR balance - held + :delta_micros >= -:guard_micros::bigint)
    RETURNING balance
),
new_entry AS (
    INSERT INTO ledger (entry_id, account_id, pocket, delta, kind, amount_after, available_after, buffer, ref, created_at, actor)
    OVERRIDING SYSTEM VALUE
    SELECT entry_id, :account_id, 'money', :delta_micros, :kind, :amount_after, :available_after,
           :buffer_micros, :reference, :now, :actor
      FROM claimed_key
     WHERE EXISTS (SELECT 1 FROM changed_account)
    RETURNING entry_id
)
SELECT (SELECT entry_id FROM claimed_key) AS claimed_entry_id,
       (SELECT balance FROM changed_account) AS balance_after,
       (SELECT entry_id FROM new_entry) AS entry_id,
       (SELECT COALESCE(json_agg(json_build_array(pocket, remaining, held, cycle_started_at)), '[]')::text
          FROM allowances WHERE account_id = :account_id) AS allowances,
       (SELECT COUNT(*) FROM jobs
         WHERE account_id = :account_id AND status IN ('queued', 'in_progress')) AS open_jobs
