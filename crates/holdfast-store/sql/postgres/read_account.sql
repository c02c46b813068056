-- read_account: an account with the database clock, its allowance pockets and its open
-- jobs, without a lock (in a read transaction: one snapshot).
--
-- :account_id  the account
SELECT accounts.*,
       (extract(epoch from clock_timestamp()) * 1000000)::bigint AS now,
       (SELECT COALESCE(json_agg(json_build_array(pocket, remaining, held, cycle_started_at) ORDER BY pocket), '[]')::text
          FROM allowances WHERE account_id = :account_id) AS allowances,
       (SELECT COUNT(*) FROM jobs
         WHERE account_id = :account_id AND status IN ('queued', 'in_progress')) AS open_jobs,
       NULL::text AS keys
  FROM accounts
 WHERE account_id = :account_id
