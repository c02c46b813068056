-- statement_balance_before: an account's money balance just before a time: the
-- amount_after of its last money entry written before it (no row: 0). An account's
-- entries are written one at a time under its lock, so entry order is time order.
--
-- :account_id  the account
-- :at          the time (micros)
SELECT amount_after
  FROM ledger
 WHERE account_id = :account_id AND pocket = 'money' AND created_at < :at
 ORDER BY entry_id DESC
 LIMIT 1
