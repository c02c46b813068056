-- ingest_lock_accounts: locks the accounts of a batch ingest in sorted order of id (the
-- lock order of every multi-account transaction, so two never deadlock) and reads them
-- with the database clock. Under READ COMMITTED a row locked FOR UPDATE comes back as
-- its newest committed version (a row changed while this waited is fetched again), so
-- the rows are current without a second read. What else the ingest needs (pockets, open
-- jobs, keys, entry ids, the clock after every wait) is read once every lock is held
-- (ingest_read_accounts). `= ANY (ARRAY(…))` rather than `IN (SELECT …)`: an index scan
-- of the primary key, not a hash join over every account.
--
-- :account_ids  the accounts, as a JSON array of strings
SELECT accounts.*,
       (extract(epoch from clock_timestamp()) * 1000000)::bigint AS now
  FROM accounts
 WHERE account_id = ANY (ARRAY(SELECT jsonb_array_elements_text(:account_ids::jsonb)))
 ORDER BY account_id
   FOR UPDATE
