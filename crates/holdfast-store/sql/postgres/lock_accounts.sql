-- lock_accounts: locks the rows of several accounts in sorted order of id (the lock
-- order of every multi-account transaction, so two never deadlock), for a transaction
-- that then works on each of them (a worker's batched complete or fail).
-- `= ANY (ARRAY(…))` rather than `IN (SELECT …)`: an index scan of the primary key,
-- not a hash join over every account.
--
-- :account_ids  the accounts, as a JSON array of strings
SELECT account_id
  FROM accounts
 WHERE account_id = ANY (ARRAY(SELECT jsonb_array_elements_text(:account_ids::jsonb)))
 ORDER BY account_id
   FOR UPDATE
