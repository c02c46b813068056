-- audit_entries_without_key: keyed ledger entries (top_up, bonus, debit, refund,
-- job_refund, grant) that no idempotency record points at, among those made since
-- idempotency records were last pruned (an entry and its key's record share their time).
SELECT entry.account_id, entry.entry_id
FROM ledger AS entry
WHERE entry.kind IN ('top_up', 'bonus', 'debit', 'refund', 'job_refund', 'grant')
  AND NOT EXISTS (
    SELECT 1
    FROM idempotency
    WHERE idempotency.entry_id = entry.entry_id
  )
  AND entry.created_at >= coalesce(
    (SELECT pruned_before FROM retention_marks WHERE what = 'idempotency'), 0)
