-- set_blocked: blocks (a time) or unblocks (NULL) an account.
--
-- :account_id  the account
-- :blocked_at  when it was blocked, or NULL
UPDATE accounts
   SET blocked_at = :blocked_at
 WHERE account_id = :account_id
