-- lock_jobs_and_accounts: a worker's batched complete or fail locks its jobs and their
-- accounts in ONE statement, in the lock order of every transaction: the accounts
-- first, in sorted order of id (so two batches never deadlock), then the jobs. Each
-- job comes back with its account's columns, as lock_account_and_job returns one job;
-- the database clock is read once every lock is held. Under READ COMMITTED a row
-- locked FOR UPDATE comes back as its newest committed version, so the rows are
-- current. A job's account never changes, so the accounts are found by an unlocked
-- read of the jobs. Jobs that do not exist are absent. The pockets are not read: the
-- caller reads them for the accounts whose jobs hold one.
--
-- :job_ids  the jobs, as a JSON array of strings
WITH named_job AS (
    SELECT job_id, account_id
      FROM jobs
     WHERE job_id = ANY (ARRAY(SELECT jsonb_array_elements_text(:job_ids::jsonb)))
),
locked_account AS MATERIALIZED (
    SELECT accounts.*
      FROM accounts
     WHERE account_id = ANY (ARRAY(SELECT DISTINCT account_id FROM named_job))
     ORDER BY account_id
       FOR UPDATE
),
-- Counting the locked accounts makes the jobs wait until every account is locked.
accounts_locked AS (
    SELECT COUNT(*) AS accounts FROM locked_account
),
locked_job AS MATERIALIZED (
    SELECT jobs.*
      FROM jobs, accounts_locked
     WHERE jobs.job_id = ANY (ARRAY(SELECT job_id FROM named_job))
       AND accounts_locked.accounts > 0
     ORDER BY jobs.job_id
       FOR UPDATE OF jobs
),
all_locked AS (
    SELECT COUNT(*) AS jobs,
           (extract(epoch from clock_timestamp()) * 1000000)::bigint AS now
      FROM locked_job
)
SELECT job.*,
       account.plan, account.plan_until, account.max_concurrent_jobs, account.balance,
       account.held, account.total_credited, account.total_spent, account.suspended_at,
       account.blocked_at, account.banned_at, account.created_at AS account_created_at, account.last_active_at,
       account.recharge_below, account.recharge_amount,
       all_locked.now,
       NULL::text AS allowances, NULL::bigint AS open_jobs, NULL::text AS keys
  FROM locked_job AS job
  JOIN locked_account AS account ON account.account_id = job.account_id
 CROSS JOIN all_locked
