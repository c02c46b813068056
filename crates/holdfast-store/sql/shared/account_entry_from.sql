-- account_entry_from: an account's first entry at or after an entry id, with its time:
-- one probe of ledger_by_account, for the search of an account's last entry before a
-- time (reads::statement), which relies on an account's entries being in time order
-- (they are written one at a time under its lock, each with the clock read after it).
--
-- :account_id  the account
-- :from_id     the entry id to start at
SELECT entry_id, created_at
  FROM ledger
 WHERE account_id = :account_id AND entry_id >= :from_id
 ORDER BY entry_id
 LIMIT 1
