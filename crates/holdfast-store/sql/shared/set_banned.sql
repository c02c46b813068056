-- set_banned: bans (a time) or unbans (NULL) an account.
--
-- :account_id  the account
-- :banned_at   when it was banned, or NULL
UPDATE accounts
   SET banned_at = :banned_at
 WHERE account_id = :account_id
