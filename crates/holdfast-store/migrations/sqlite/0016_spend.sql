-- Spending per period (issue #41): an account's own rule of spending, and the marks its
-- spending in the current UTC day and month is read from. As migrations/postgres/0016.
ALTER TABLE accounts ADD COLUMN spend_policy TEXT;
ALTER TABLE accounts ADD COLUMN spend_day_start INTEGER;
ALTER TABLE accounts ADD COLUMN spend_day_base INTEGER NOT NULL DEFAULT 0;
ALTER TABLE accounts ADD COLUMN spend_month_start INTEGER;
ALTER TABLE accounts ADD COLUMN spend_month_base INTEGER NOT NULL DEFAULT 0;
ALTER TABLE accounts ADD COLUMN spend_alerted_start INTEGER;
ALTER TABLE accounts ADD COLUMN spend_alerted INTEGER NOT NULL DEFAULT 0;

-- The marks of the accounts as they stand: this day's and this month's spending so far
-- from the ledger, so a limit counts what was spent before the upgrade too.
CREATE TEMPORARY TABLE spend_bounds AS
SELECT now - (now % 86400000000) AS day_start,
       CAST(strftime('%s', now / 1000000, 'unixepoch', 'start of month') AS INTEGER) * 1000000
           AS month_start
  FROM (SELECT CAST((julianday('now') - 2440587.5) * 86400000000 AS INTEGER) AS now);

UPDATE accounts
   SET spend_day_start = (SELECT day_start FROM spend_bounds),
       spend_day_base = total_spent - COALESCE((
           SELECT SUM(-entry.delta) FROM ledger AS entry
            WHERE entry.account_id = accounts.account_id
              AND entry.created_at >= (SELECT day_start FROM spend_bounds)
              AND entry.pocket = 'money'
              AND entry.kind IN ('debit', 'capture', 'job_refund')), 0),
       spend_month_start = (SELECT month_start FROM spend_bounds),
       spend_month_base = total_spent - COALESCE((
           SELECT SUM(-entry.delta) FROM ledger AS entry
            WHERE entry.account_id = accounts.account_id
              AND entry.created_at >= (SELECT month_start FROM spend_bounds)
              AND entry.pocket = 'money'
              AND entry.kind IN ('debit', 'capture', 'job_refund')), 0);

DROP TABLE spend_bounds;
