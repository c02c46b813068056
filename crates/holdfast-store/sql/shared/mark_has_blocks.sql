-- mark_has_blocks: the account has a credit block from now on, so its reads read them.
--
-- :account_id  the account
UPDATE accounts SET has_blocks = 1 WHERE account_id = :account_id
