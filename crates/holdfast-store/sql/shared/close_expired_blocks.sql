-- close_expired_blocks: the expiry pass closes an account's blocks past their expiry that
-- hold nothing any more (written off, spent, nothing reserved), so they leave its index.
-- Under the account's lock, after the write-offs.
--
-- :account_id  the account
-- :now         the time (database clock, micros)
UPDATE credit_blocks
   SET closed_at = :now
 WHERE account_id = :account_id AND expires_at <= :now AND closed_at IS NULL
   AND remaining = 0 AND held = 0
