-- audit_ledger_by_pocket: per (account, pocket) with ledger entries: the sum of their
-- deltas and the amount after the last entry.
WITH pocket_ledger AS (
  SELECT account_id,
         pocket,
         CAST(SUM(delta) AS BIGINT) AS total,
         MAX(entry_id) AS last_entry_id
  FROM ledger
  GROUP BY account_id, pocket
)
SELECT last_entry.account_id, last_entry.pocket, pocket_ledger.total, last_entry.amount_after
FROM ledger AS last_entry
JOIN pocket_ledger ON last_entry.entry_id = pocket_ledger.last_entry_id
