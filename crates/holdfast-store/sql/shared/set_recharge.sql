-- set_recharge: sets (or, with NULLs, removes) an account's auto-recharge.
--
-- :account_id  the account
-- :below       the line available money falls below (micros), or NULL
-- :amount      the top-up to ask for (micros), or NULL
UPDATE accounts
   SET recharge_below = :below, recharge_amount = :amount
 WHERE account_id = :account_id
