-- Spending marks only where a rule is in force: as migrations/postgres/0017. SQLite
-- cannot drop a column's NOT NULL; a base of 0 takes no bytes of its row.
UPDATE accounts
   SET spend_day_start = NULL,
       spend_day_base = 0,
       spend_month_start = NULL,
       spend_month_base = 0;
