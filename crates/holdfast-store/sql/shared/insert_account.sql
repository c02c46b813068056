-- insert_account: creates an account; nothing when it exists already (the caller then
-- updates it). Its spending marks are unset: the period of a rule of spending is marked
-- by the first write under the rule.
--
-- :account_id           the account
-- :plan                 its plan
-- :plan_until           when the plan ends (the card's default_plan applies after), or NULL
-- :max_concurrent_jobs  its own concurrency limit, or NULL for the plan's
-- :now                  its creation time (database clock, micros)
INSERT INTO accounts (account_id, plan, plan_until, max_concurrent_jobs, created_at)
VALUES (:account_id, :plan, :plan_until, :max_concurrent_jobs, :now)
ON CONFLICT (account_id) DO NOTHING
