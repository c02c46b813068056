-- set_spend_policy: sets (or, with NULL, removes) an account's own rule of spending,
-- which replaces its plan's (core's SpendPolicy as JSON: limit, period, alerts).
--
-- :account_id  the account
-- :policy      the rule as JSON, or NULL
UPDATE accounts
   SET spend_policy = :policy
 WHERE account_id = :account_id
