-- lock_jobs_and_accounts: a finishing call (one job or a batch) or a job refund reads
-- its jobs, each with its account's columns and allowance pockets, and the database
-- clock (the write lock is held from BEGIN IMMEDIATE). Jobs that do not exist are
-- absent.
--
-- :job_ids  the jobs, as a JSON array of strings (a column bound on SQLite)
SELECT job.*,
       account.plan, account.plan_until, account.max_concurrent_jobs, account.balance,
       account.held, account.total_credited, account.total_spent, account.suspended_at,
       account.blocked_at, account.banned_at, account.created_at AS account_created_at, account.last_active_at,
       account.recharge_below, account.recharge_amount,
       account.spend_policy, account.spend_day_start, account.spend_day_base,
       account.spend_month_start, account.spend_month_base, account.spend_alerted_start,
       account.spend_alerted, account.has_blocks,
       CAST((julianday('now') - 2440587.5) * 86400000000 AS INTEGER) AS now,
       (SELECT json_group_array(json_array(pocket, remaining, held, cycle_started_at))
          FROM allowances WHERE account_id = account.account_id) AS allowances,
       NULL AS open_jobs, NULL AS keys
  FROM jobs AS job
  JOIN accounts AS account ON account.account_id = job.account_id
 WHERE job.job_id IN (SELECT value FROM json_each(:job_ids))
