-- try_lock_account: the account, if it exists (the transaction's BEGIN IMMEDIATE already
-- holds the write lock, so no other transaction holds it).
--
-- :account_id  the account
SELECT account_id
FROM accounts
WHERE account_id = :account_id
