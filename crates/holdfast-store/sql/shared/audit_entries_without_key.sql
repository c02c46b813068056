-- audit_entries_without_key: keyed ledger entries (top_up, bonus, debit, refund,
-- job_refund, grant) without their key, among those made since money keys are kept for
-- good (the 'ledger_keys' mark of migration 0011: before it the prune pass removed them).
SELECT entry.account_id, entry.entry_id
FROM ledger AS entry
WHERE entry.kind IN ('top_up', 'bonus', 'debit', 'refund', 'job_refund', 'grant')
  AND entry.idempotency_key IS NULL
  AND entry.created_at >= (SELECT pruned_before FROM retention_marks WHERE what = 'ledger_keys')
ORDER BY entry.entry_id
