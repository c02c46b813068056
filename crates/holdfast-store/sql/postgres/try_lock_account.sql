-- try_lock_account: locks an account's row, or returns no row when another transaction
-- holds its lock (or there is no such account).
--
-- :account_id  the account
SELECT account_id
FROM accounts
WHERE account_id = :account_id
FOR UPDATE SKIP LOCKED
