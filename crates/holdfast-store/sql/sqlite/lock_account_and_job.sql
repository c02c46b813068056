-- lock_account_and_job: a job with its account and the account's allowance pockets
-- (the write lock is held from BEGIN IMMEDIATE).
--
-- :job_id  the job
SELECT job.*,
       account.plan, account.plan_until, account.max_concurrent_jobs, account.balance,
       account.held, account.total_credited, account.total_spent, account.suspended_at,
       account.blocked_at, account.banned_at, account.created_at AS account_created_at, account.last_active_at,
       account.recharge_below, account.recharge_amount,
       CAST((julianday('now') - 2440587.5) * 86400000000 AS INTEGER) AS now,
       (SELECT json_group_array(json_array(pocket, remaining, held, cycle_started_at))
          FROM allowances WHERE account_id = account.account_id) AS allowances,
       NULL AS open_jobs, NULL AS keys
  FROM accounts AS account
  JOIN jobs AS job ON job.account_id = account.account_id
 WHERE job.job_id = :job_id
