-- lock_accounts: the accounts of a transaction that works on several of them (a
-- worker's batched complete or fail). The write transaction (BEGIN IMMEDIATE) holds the
-- database's write lock already: nothing to lock row by row.
--
-- :account_ids  the accounts, as a JSON array of strings
SELECT account_id
  FROM accounts
 WHERE account_id IN (SELECT value FROM json_each(:account_ids))
 ORDER BY account_id
