-- ingest_lock_accounts: the accounts of a batch ingest that exist, in sorted order of id.
-- The write transaction (BEGIN IMMEDIATE) holds the database's write lock already.
--
-- :account_ids  the accounts, as a JSON array of strings
SELECT account_id
  FROM accounts
 WHERE account_id IN (SELECT value FROM json_each(:account_ids))
 ORDER BY account_id
