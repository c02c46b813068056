-- audit_account_counters: every account's total_credited and total_spent counters beside
-- what its ledger says: credited = sum of top_up and bonus deltas, spent = sum of -delta
-- of money debit and capture entries less money job_refund entries (their delta is
-- positive, so -delta subtracts them). Beside them, the spending since each spending
-- mark (day, month) as the marks say it (total_spent less the base) and as the ledger
-- does (the entries written since the mark's start; none when it has no start).
SELECT account.account_id,
       account.total_credited,
       account.total_spent,
       COALESCE(credit.credited, 0) AS credited,
       COALESCE(spending.spent, 0) AS spent,
       account.spend_day_start,
       account.total_spent - account.spend_day_base AS day_marked,
       COALESCE(spending.day_spent, 0) AS day_spent,
       account.spend_month_start,
       account.total_spent - account.spend_month_base AS month_marked,
       COALESCE(spending.month_spent, 0) AS month_spent
FROM accounts AS account
LEFT JOIN (
    SELECT entry.account_id, CAST(SUM(entry.delta) AS BIGINT) AS credited
      FROM ledger AS entry
     WHERE entry.kind IN ('top_up', 'bonus')
     GROUP BY entry.account_id
) AS credit ON credit.account_id = account.account_id
LEFT JOIN (
    SELECT entry.account_id,
           CAST(SUM(-entry.delta) AS BIGINT) AS spent,
           CAST(SUM(CASE WHEN entry.created_at >= owner.spend_day_start THEN -entry.delta END)
                AS BIGINT) AS day_spent,
           CAST(SUM(CASE WHEN entry.created_at >= owner.spend_month_start THEN -entry.delta END)
                AS BIGINT) AS month_spent
      FROM ledger AS entry
      JOIN accounts AS owner ON owner.account_id = entry.account_id
     WHERE entry.pocket = 'money'
       AND entry.kind IN ('debit', 'capture', 'job_refund')
     GROUP BY entry.account_id
) AS spending ON spending.account_id = account.account_id
