-- write_money: one change of the money pocket under the client's key: the ledger entry
-- that carries the key, then the account row from it — or nothing at all when the key
-- is taken already, by a money change (the entry's insert meets ledger_by_key: ON
-- CONFLICT DO NOTHING) or a job submit (idempotency): entry_id is then NULL, and the
-- caller looks the key up. The account row is written only when the entry was
-- (changes() is the row count of the statement before). A debit is not written here:
-- every debit goes through ingest_write, whose account update carries the buffer check
-- (a credit or a refund of a top-up has none). The last
-- statement answers, as PostgreSQL's one statement does: changes() is then the account
-- row's count (1 exactly when the entry was written) and last_insert_rowid() the entry;
-- the pockets and open jobs were read with the lock (lock_account), so they are NULL.
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
INSERT INTO ledger (account_id, pocket, delta, kind, amount_after, available_after, buffer, ref,
                    created_at, actor, idempotency_key, request_hash, blocks)
SELECT :account_id, 'money', :delta_micros, :kind, :amount_after, :available_after,
       :buffer_micros, :reference, :now, :actor, :key, :request_hash, :blocks
 WHERE NOT EXISTS (SELECT 1 FROM idempotency WHERE account_id = :account_id AND key = :key)
    ON CONFLICT (account_id, idempotency_key) WHERE idempotency_key IS NOT NULL DO NOTHING;

UPDATE accounts
   SET balance = balance + :delta_micros,
       total_credited = total_credited + :credited_micros,
       total_spent = total_spent + :spent_micros,
       suspended_at = :suspended_at
 WHERE account_id = :account_id
   AND changes() = 1;

SELECT CASE WHEN changes() = 1 THEN last_insert_rowid() END AS entry_id,
       CASE WHEN changes() = 1
            THEN (SELECT balance FROM accounts WHERE account_id = :account_id)
       END AS balance_after,
       NULL AS allowances,
       NULL AS open_jobs,
       NULL AS keys
