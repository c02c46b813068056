-- account_newest_entry: an account's newest entry, with its time (no row: none yet).
--
-- :account_id  the account
SELECT entry_id, created_at
  FROM ledger
 WHERE account_id = :account_id
 ORDER BY entry_id DESC
 LIMIT 1
