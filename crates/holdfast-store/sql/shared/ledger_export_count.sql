-- ledger_export_count: how many entries ledger_export would give from a cursor to the
-- end (for a progress bar).
--
-- :after       the cursor: the last entry already exported (0 = from the start)
-- :since       written at or after this (micros)
-- :until       written before this (micros)
-- :account_id  only this account's entries (NULL = every account)
-- :kind        only entries of this kind (NULL = every kind)
SELECT COUNT(*) AS n
FROM ledger
WHERE entry_id > :after
  AND created_at >= :since
  AND created_at < :until
  AND (CAST(:account_id AS TEXT) IS NULL OR account_id = :account_id)
  AND (CAST(:kind AS TEXT) IS NULL OR kind = :kind)
