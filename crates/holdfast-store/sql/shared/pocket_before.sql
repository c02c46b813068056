-- pocket_before: what one pocket of an account held just before a time: the amount_after
-- of its last entry written before it, and that entry (no row: the pocket had no entry
-- then, so it did not exist, or for money, was 0). An account's entries are written one
-- at a time under its lock, so entry order is time order; every change of a pocket is an
-- entry (the audit's invariant), so its last entry's amount_after is what it held.
--
-- :account_id  the account
-- :pocket      the pocket (`money` or an allowance)
-- :before      the time (micros, exclusive)
SELECT amount_after, entry_id
  FROM ledger
 WHERE account_id = :account_id AND pocket = :pocket AND created_at < :before
 ORDER BY entry_id DESC
 LIMIT 1
