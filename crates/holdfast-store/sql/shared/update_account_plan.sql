-- update_account_plan: an existing account's plan, plan end and concurrency limit.
--
-- :account_id           the account
-- :plan                 its plan
-- :plan_until           when the plan ends, or NULL
-- :max_concurrent_jobs  its own concurrency limit, or NULL for the plan's
UPDATE accounts
   SET plan = :plan,
       plan_until = :plan_until,
       max_concurrent_jobs = :max_concurrent_jobs
 WHERE account_id = :account_id
