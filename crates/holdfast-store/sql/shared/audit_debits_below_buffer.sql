-- audit_debits_below_buffer: debit entries that left available money below -buffer, or
-- do not record the available amount or the buffer.
SELECT account_id, entry_id, available_after, buffer
FROM ledger
WHERE kind = 'debit'
  AND (available_after IS NULL OR buffer IS NULL OR available_after < -buffer)
