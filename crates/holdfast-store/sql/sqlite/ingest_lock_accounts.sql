-- ingest_lock_accounts: the accounts of a batch ingest that exist, in sorted order of id,
-- with the database clock. The write transaction (BEGIN IMMEDIATE) holds the database's
-- write lock already.
--
-- :account_ids  the accounts, as a JSON array of strings
SELECT accounts.*,
       CAST((julianday('now') - 2440587.5) * 86400000000 AS INTEGER) AS now
  FROM accounts
 WHERE account_id IN (SELECT value FROM json_each(:account_ids))
 ORDER BY account_id
