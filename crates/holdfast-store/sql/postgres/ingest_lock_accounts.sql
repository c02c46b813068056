-- ingest_lock_accounts: locks the accounts of a batch ingest in sorted order of id (the
-- lock order of every multi-account transaction, so two never deadlock). Nothing is read
-- here: the state is read after every lock is held (ingest_read_accounts), so that it
-- is current. `= ANY (ARRAY(…))` rather than `IN (SELECT …)`: an index scan of the
-- primary key, not a hash join over every account.
--
-- :account_ids  the accounts, as a JSON array of strings
SELECT account_id
  FROM accounts
 WHERE account_id = ANY (ARRAY(SELECT jsonb_array_elements_text(:account_ids::jsonb)))
 ORDER BY account_id
   FOR UPDATE
