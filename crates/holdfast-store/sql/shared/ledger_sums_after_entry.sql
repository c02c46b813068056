-- ledger_sums_after_entry: a pocket's ledger after an entry (its checkpoint): the sum of
-- deltas, what was credited (top_up, bonus) and what money was spent (debit, capture,
-- less job refunds),
-- and the last entry id (NULL when there is none).
--
-- :account_id      the account
-- :pocket          the pocket (money or an allowance)
-- :after_entry_id  the checkpoint's last entry (0 = the whole ledger)
SELECT
  CAST(COALESCE(SUM(delta), 0) AS BIGINT) AS total,
  CAST(COALESCE(SUM(
    CASE WHEN kind IN ('top_up', 'bonus') THEN delta ELSE 0 END
  ), 0) AS BIGINT) AS credited,
  CAST(COALESCE(SUM(
    CASE WHEN pocket = 'money' AND kind IN ('debit', 'capture', 'job_refund') THEN -delta ELSE 0 END
  ), 0) AS BIGINT) AS spent,
  MAX(entry_id) AS last_id
FROM ledger
WHERE account_id = :account_id
  AND pocket = :pocket
  AND entry_id > :after_entry_id
