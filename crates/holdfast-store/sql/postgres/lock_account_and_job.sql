-- lock_account_and_job: a job and its account, both locked, in one statement. FOR
-- UPDATE OF account, job locks the account row first, then the job (the lock order
-- everywhere), and re-reads both if it had to wait for either, so both are current.
-- The account's pockets are read after it when the job holds one.
--
-- :job_id  the job
SELECT job.*,
       account.plan, account.plan_until, account.max_concurrent_jobs, account.balance,
       account.held, account.total_credited, account.total_spent, account.suspended_at,
       account.blocked_at, account.banned_at, account.created_at AS account_created_at, account.last_active_at,
       account.recharge_below, account.recharge_amount,
       (extract(epoch from clock_timestamp()) * 1000000)::bigint AS now,
       NULL::text AS allowances, NULL::bigint AS open_jobs, NULL::text AS keys
  FROM accounts AS account
  JOIN jobs AS job ON job.account_id = account.account_id
 WHERE job.job_id = :job_id
   FOR UPDATE OF account, job
