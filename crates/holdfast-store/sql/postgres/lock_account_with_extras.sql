-- lock_account_with_extras: locks the account row and reads it with the database
-- clock, its allowance pockets and its open jobs in ONE statement. The pockets and the
-- open jobs come from the snapshot the statement took before any wait for the lock, so
-- they may be stale: a write that decides on them checks they are still so (submit's
-- unchanged_since_read), or they are read again first (read_account_extras).
--
-- read_before_lock says so (1).
--
-- :account_id  the account
SELECT accounts.*,
       (extract(epoch from clock_timestamp()) * 1000000)::bigint AS now,
       (SELECT COALESCE(json_agg(json_build_array(pocket, remaining, held, cycle_started_at) ORDER BY pocket), '[]')::text
          FROM allowances WHERE account_id = :account_id) AS allowances,
       (SELECT COUNT(*) FROM jobs
         WHERE account_id = :account_id AND status IN ('queued', 'in_progress')) AS open_jobs,
       NULL::text AS keys,
       1::bigint AS read_before_lock
  FROM accounts
 WHERE account_id = :account_id
   FOR UPDATE
