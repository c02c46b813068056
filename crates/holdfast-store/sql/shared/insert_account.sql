-- insert_account: creates an account; nothing when it exists already (the caller then
-- updates it). Its spending marks start with it: nothing spent this day or month.
--
-- :account_id           the account
-- :plan                 its plan
-- :plan_until           when the plan ends (the card's default_plan applies after), or NULL
-- :max_concurrent_jobs  its own concurrency limit, or NULL for the plan's
-- :now                  its creation time (database clock, micros)
-- :day_start            when the day and the month of :now began (core's SpendPeriod)
-- :month_start
INSERT INTO accounts (account_id, plan, plan_until, max_concurrent_jobs, created_at,
                      spend_day_start, spend_month_start)
VALUES (:account_id, :plan, :plan_until, :max_concurrent_jobs, :now, :day_start, :month_start)
ON CONFLICT (account_id) DO NOTHING
