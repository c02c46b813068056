-- statement_holds_open_at: the holds of an account's jobs that were open at a time
-- (submitted before it, not finished before it).
--
-- :account_id  the account
-- :at          the time (micros)
SELECT hold
  FROM jobs
 WHERE account_id = :account_id AND created_at < :at
   AND (finished_at IS NULL OR finished_at >= :at)
