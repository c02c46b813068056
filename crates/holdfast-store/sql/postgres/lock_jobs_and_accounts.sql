-- lock_jobs_and_accounts: a finishing call (complete, fail, cancel; one job or a
-- worker's batch) and a job refund lock their jobs and the jobs' accounts in ONE
-- statement, in the lock order of every transaction: the accounts first, in sorted
-- order of id (so two calls never deadlock), then the jobs. Each job comes back with
-- its account's columns; the database clock is read once every lock is held. Under
-- READ COMMITTED a row locked FOR UPDATE comes back as its newest committed version,
-- so the rows are current. A job's account never changes, so the accounts are found by
-- an unlocked read of the jobs. Jobs that do not exist are absent. The pockets are not
-- read: the caller reads them for the accounts whose jobs hold one.
--
-- Shaped as ingest_lock_accounts, to be planned once per connection for a call of one
-- and of a hundred: the array through a sub-select, each row locked by its own probe of
-- its primary key (`LATERAL … OFFSET 0`).
--
-- :job_ids  the jobs, an array of text
WITH named_account AS (
    SELECT DISTINCT job.account_id
      FROM unnest((SELECT :job_ids::text[])) AS wanted(id)
     CROSS JOIN LATERAL (SELECT jobs.account_id
                           FROM jobs
                          WHERE jobs.job_id = wanted.id
                         OFFSET 0) AS job
     ORDER BY job.account_id
),
locked_account AS MATERIALIZED (
    SELECT account.*
      FROM named_account
     CROSS JOIN LATERAL (SELECT accounts.*
                           FROM accounts
                          WHERE accounts.account_id = named_account.account_id
                         OFFSET 0
                            FOR UPDATE) AS account
),
-- Counting the locked accounts makes the jobs wait until every account is locked. The
-- jobs need no order among themselves: each belongs to an account this statement holds,
-- and what else locks a job (a lease, a heartbeat) holds no other job while it waits. A
-- job named twice is locked and answered twice (the caller keeps one).
accounts_locked AS (
    SELECT COUNT(*) AS accounts FROM locked_account
),
locked_job AS MATERIALIZED (
    SELECT job.*
      FROM accounts_locked
     CROSS JOIN unnest((SELECT :job_ids::text[])) AS wanted(id)
     CROSS JOIN LATERAL (SELECT jobs.*
                           FROM jobs
                          WHERE jobs.job_id = wanted.id
                            AND accounts_locked.accounts > 0
                         OFFSET 0
                            FOR UPDATE) AS job
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
       account.spend_policy, account.spend_day_start, account.spend_day_base,
       account.spend_month_start, account.spend_month_base, account.spend_alerted_start,
       account.spend_alerted, account.has_blocks,
       all_locked.now,
       NULL::text AS allowances, NULL::bigint AS open_jobs, NULL::text AS keys
  FROM locked_job AS job
  JOIN locked_account AS account ON account.account_id = job.account_id
 CROSS JOIN all_locked
