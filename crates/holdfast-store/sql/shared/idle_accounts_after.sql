-- idle_accounts_after: account ids after a cursor, in id order, of the accounts
-- reactivation may refill: neither blocked nor banned, active once, idle since a time, with an allowance
-- pocket whose cycle started before a time (its shortest window has passed).
--
-- :after_account_id             the cursor: the last account already taken ('' = from the start)
-- :limit                        at most this many accounts
-- :idle_since_micros            last active at or before this (now minus reactivate_after_seconds)
-- :cycle_started_before_micros  a pocket's cycle started at or before this (now minus the shortest window)
SELECT account.account_id
FROM accounts AS account
WHERE account.account_id > :after_account_id
  AND account.blocked_at IS NULL
  AND account.banned_at IS NULL
  AND account.last_active_at IS NOT NULL
  AND account.last_active_at <= :idle_since_micros
  AND EXISTS (
    SELECT 1
    FROM allowances AS pocket
    WHERE pocket.account_id = account.account_id
      AND pocket.cycle_started_at <= :cycle_started_before_micros
  )
ORDER BY account.account_id
LIMIT :limit
