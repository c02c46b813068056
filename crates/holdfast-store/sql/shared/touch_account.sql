-- touch_account: a new version of the account's row, nothing in it changed: what a
-- transaction that changes the account's pockets without writing its row runs (a
-- refill, a grant, a pocket a plan adds). Every change of an account's pockets or open
-- jobs updates its row, so a reader that sees the same row version as an earlier
-- snapshot knows its pockets and open jobs from that snapshot are still current
-- (ingest_lock_accounts; docs/DESIGN.md, "Account row versions").
--
-- :account_id  the account
UPDATE accounts
   SET held = held
 WHERE account_id = :account_id
