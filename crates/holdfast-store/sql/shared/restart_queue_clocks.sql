-- restart_queue_clocks: the account's suspension cleared: its queued jobs start waiting
-- again from now (the time suspended does not count toward their expiry).
--
-- :account_id  the account
-- :now         the time (database clock, micros)
UPDATE jobs
   SET queued_since = :now
 WHERE account_id = :account_id AND status = 'queued'
