-- Spending per period (issue #41): an account's own rule of spending, and the marks its
-- spending in the current UTC day and month is read from.
--
-- spend_policy: the account's own rule as JSON ({"limit", "period", "alerts"}), which
-- replaces its plan's ([plans.NAME.spend]); NULL: the plan's.
-- spend_day_start, spend_month_start: when the day and the month of the last write that
-- changed total_spent began; spend_day_base, spend_month_base: total_spent then, before
-- that write. The spending of a period is total_spent less its base; a period that began
-- after its mark has spent nothing yet (core's SpendMarks::rolled).
-- spend_alerted_start, spend_alerted: the highest threshold told
-- (account.spend_threshold) in the period that began then.
ALTER TABLE accounts
    ADD COLUMN spend_policy        TEXT,
    ADD COLUMN spend_day_start     BIGINT,
    ADD COLUMN spend_day_base      BIGINT NOT NULL DEFAULT 0,
    ADD COLUMN spend_month_start   BIGINT,
    ADD COLUMN spend_month_base    BIGINT NOT NULL DEFAULT 0,
    ADD COLUMN spend_alerted_start BIGINT,
    ADD COLUMN spend_alerted       BIGINT NOT NULL DEFAULT 0;

-- The marks of the accounts as they stand: this day's and this month's spending so far
-- from the ledger (money debits and captures less money job refunds, as total_spent
-- counts), so a limit counts what was spent before the upgrade too.
CREATE TEMPORARY TABLE spend_bounds ON COMMIT DROP AS
SELECT now - mod(now, 86400000000) AS day_start,
       (extract(epoch from date_trunc('month', to_timestamp(now / 1000000.0) AT TIME ZONE 'UTC'))
        * 1000000)::bigint AS month_start
  FROM (SELECT (extract(epoch from clock_timestamp()) * 1000000)::bigint AS now) AS clock;

UPDATE accounts
   SET spend_day_start = bounds.day_start,
       spend_day_base = accounts.total_spent,
       spend_month_start = bounds.month_start,
       spend_month_base = accounts.total_spent
  FROM spend_bounds AS bounds;

UPDATE accounts
   SET spend_day_base = accounts.spend_day_base - spent.day,
       spend_month_base = accounts.spend_month_base - spent.month
  FROM (SELECT entry.account_id,
               COALESCE(SUM(-entry.delta) FILTER (WHERE entry.created_at >= bounds.day_start), 0) AS day,
               SUM(-entry.delta) AS month
          FROM ledger AS entry, spend_bounds AS bounds
         WHERE entry.created_at >= bounds.month_start
           AND entry.pocket = 'money'
           AND entry.kind IN ('debit', 'capture', 'job_refund')
         GROUP BY entry.account_id) AS spent
 WHERE spent.account_id = accounts.account_id;
