-- write_off_balance: the account's balance less what an expiry wrote off (its ledger
-- entry is written beside it), with the suspension that leaves. Under the account's lock.
--
-- :account_id    the account
-- :delta         the change of the balance (negative)
-- :suspended_at  suspended_at after it
UPDATE accounts
   SET balance = balance + :delta, suspended_at = :suspended_at
 WHERE account_id = :account_id
