-- lock_account: locks the account row (FOR UPDATE) and reads it with the database
-- clock. Its pockets, open jobs and idempotency records are read after the lock by
-- read_account_extras, in a statement of its own: under READ COMMITTED that statement
-- takes a new snapshot, so it sees what another transaction committed while this one
-- waited for the lock.
--
-- :account_id  the account
SELECT accounts.*,
       (extract(epoch from clock_timestamp()) * 1000000)::bigint AS now,
       NULL::text AS allowances, NULL::bigint AS open_jobs, NULL::text AS keys
  FROM accounts
 WHERE account_id = :account_id
   FOR UPDATE
