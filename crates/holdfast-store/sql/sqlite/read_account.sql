-- read_account: an account with the database clock, its allowance pockets and its open
-- jobs (in a read transaction: one snapshot).
--
-- :account_id  the account
SELECT accounts.*,
       CAST((julianday('now') - 2440587.5) * 86400000000 AS INTEGER) AS now,
       (SELECT json_group_array(json_array(pocket, remaining, held, cycle_started_at))
          FROM allowances WHERE account_id = :account_id) AS allowances,
       (SELECT COUNT(*) FROM jobs
         WHERE account_id = :account_id AND status IN ('queued', 'in_progress')) AS open_jobs,
       NULL AS keys
  FROM accounts
 WHERE account_id = :account_id
