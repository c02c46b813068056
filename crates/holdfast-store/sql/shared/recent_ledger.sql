-- recent_ledger: an account's ledger entries before a cursor, newest first.
--
-- :account_id  the account
-- :before      entries with a smaller id only (the smallest id of the previous page)
-- :limit       the page size
SELECT entry_id, account_id, pocket, delta, kind, amount_after, available_after, ref, created_at,
       actor, meter, seconds, blocks
  FROM ledger
 WHERE account_id = :account_id AND entry_id < :before
 ORDER BY entry_id DESC
 LIMIT :limit
