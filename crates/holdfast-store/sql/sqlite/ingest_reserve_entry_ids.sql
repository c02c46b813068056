-- ingest_reserve_entry_ids: ledger entry ids for the debits of a batch ingest: the next
-- ones after the largest the ledger ever gave (AUTOINCREMENT's sqlite_sequence). The
-- write transaction holds the database's write lock, so nothing else takes them.
--
-- :count  how many ids
WITH RECURSIVE n(i) AS (
    SELECT 1 WHERE :count >= 1
    UNION ALL
    SELECT i + 1 FROM n WHERE i < :count
)
SELECT COALESCE((SELECT seq FROM sqlite_sequence WHERE name = 'ledger'), 0) + i AS entry_id
  FROM n
