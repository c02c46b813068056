-- insert_allowance: an allowance pocket an account's plan has and the account lacks.
--
-- :account_id  the account
-- :pocket      the allowance pocket
-- :remaining   its starting amount (full for a new account, 0 for a pocket a plan adds)
-- :now         the start of its first cycle (database clock, micros)
INSERT INTO allowances (account_id, pocket, remaining, held, cycle_started_at)
VALUES (:account_id, :pocket, :remaining, 0, :now)
