-- Spending marks only where a rule is in force (issue #41): a period's base is read from
-- the ledger by the first write of the period under a rule (core's SpendMarks::mark), so
-- an account without a rule keeps no marks and its row is as narrow as before 0016. The
-- bases are facts of the past, so forgetting them loses nothing: the next write under a
-- rule reads them again, exact. The thresholds told stay (they are not in the ledger).
ALTER TABLE accounts
    ALTER COLUMN spend_day_base DROP NOT NULL,
    ALTER COLUMN spend_day_base DROP DEFAULT,
    ALTER COLUMN spend_month_base DROP NOT NULL,
    ALTER COLUMN spend_month_base DROP DEFAULT,
    ALTER COLUMN spend_alerted DROP NOT NULL,
    ALTER COLUMN spend_alerted DROP DEFAULT;

UPDATE accounts
   SET spend_day_start = NULL,
       spend_day_base = NULL,
       spend_month_start = NULL,
       spend_month_base = NULL,
       spend_alerted = CASE WHEN spend_alerted_start IS NULL THEN NULL ELSE spend_alerted END;
