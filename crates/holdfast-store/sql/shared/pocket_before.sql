-- pocket_before: what one pocket of an account held as of one of its entries: the
-- amount_after of the pocket's last entry at or before it (no row: the
-- pocket had no entry by then, so it did not exist, or for money, was 0). Every change
-- of a pocket is an entry (the audit's invariant), so its last entry's amount_after is
-- what it held.
--
-- :account_id  the account
-- :pocket      the pocket (`money` or an allowance)
-- :last_entry  the account's entry to stand at (see account_entry_from)
SELECT amount_after
  FROM ledger
 WHERE account_id = :account_id AND pocket = :pocket AND entry_id <= :last_entry
 ORDER BY entry_id DESC
 LIMIT 1
