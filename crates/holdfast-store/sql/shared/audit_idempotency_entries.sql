-- audit_idempotency_entries: idempotency records out of their place. A money change's
-- key lives on its ledger entry (migration 0011), so the idempotency table holds job
-- submits only, and no key of an account is in both places.
SELECT record.account_id, record.key, record.operation
FROM idempotency AS record
WHERE record.operation <> 'submit'
   OR EXISTS (SELECT 1 FROM ledger
               WHERE ledger.account_id = record.account_id
                 AND ledger.idempotency_key = record.key)
