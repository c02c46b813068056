-- ledger_page: an account's ledger entries after a cursor, oldest first.
--
-- :account_id  the account
-- :after       the last entry id already seen (0 for the first page)
-- :limit       the page size
SELECT entry_id, account_id, pocket, delta, kind, amount_after, available_after, ref, created_at,
       actor, meter, seconds, blocks
  FROM ledger
 WHERE account_id = :account_id AND entry_id > :after
 ORDER BY entry_id
 LIMIT :limit
