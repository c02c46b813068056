-- write_spend_marks: an account's spending marks as a unit of work leaves them (core's
-- SpendMarks): rolled to a new period before a write that changes total_spent, or a
-- threshold told. Under the account's lock.
--
-- :account_id           the account
-- :day_start            when the day of the marks began, and total_spent then
-- :day_base
-- :month_start          when the month of the marks began, and total_spent then
-- :month_base
-- :alerted_start        the period of the highest threshold told, and that threshold
-- :alerted
UPDATE accounts
   SET spend_day_start = :day_start,
       spend_day_base = :day_base,
       spend_month_start = :month_start,
       spend_month_base = :month_base,
       spend_alerted_start = :alerted_start,
       spend_alerted = :alerted
 WHERE account_id = :account_id
