-- accounts_after: account ids after a cursor, in id order.
--
-- :after_account_id  the cursor: the last account already taken ('' = from the start)
-- :limit             at most this many accounts
SELECT account_id
FROM accounts
WHERE account_id > :after_account_id
ORDER BY account_id
LIMIT :limit
