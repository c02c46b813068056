-- audit_idempotency_entries: every idempotency record that names a ledger entry, with
-- that entry's account and kind (NULL when the entry does not exist).
SELECT idempotency.account_id,
       idempotency.key,
       idempotency.operation,
       idempotency.entry_id,
       entry.account_id AS entry_account,
       entry.kind AS entry_kind
FROM idempotency
LEFT JOIN ledger AS entry ON entry.entry_id = idempotency.entry_id
WHERE idempotency.entry_id IS NOT NULL
