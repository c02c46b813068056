-- stamp_activity: the account was active now (a submit or the activity call).
--
-- :account_id  the account
-- :now         the time (database clock, micros)
UPDATE accounts
   SET last_active_at = :now
 WHERE account_id = :account_id
