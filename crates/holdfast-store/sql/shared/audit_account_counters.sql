-- audit_account_counters: every account's total_credited and total_spent counters beside
-- what its ledger says: credited = sum of top_up and bonus deltas, spent = sum of -delta
-- of money debit and capture entries less money job_refund entries (their delta is
-- positive, so -delta subtracts them).
SELECT account.account_id,
       account.total_credited,
       account.total_spent,
       COALESCE((
         SELECT CAST(SUM(entry.delta) AS BIGINT)
         FROM ledger AS entry
         WHERE entry.account_id = account.account_id
           AND entry.kind IN ('top_up', 'bonus')
       ), 0) AS credited,
       COALESCE((
         SELECT CAST(SUM(-entry.delta) AS BIGINT)
         FROM ledger AS entry
         WHERE entry.account_id = account.account_id
           AND entry.pocket = 'money'
           AND entry.kind IN ('debit', 'capture', 'job_refund')
       ), 0) AS spent
FROM accounts AS account
