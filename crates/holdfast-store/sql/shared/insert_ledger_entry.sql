-- insert_ledger_entry: appends one ledger entry (entries are never updated or deleted).
--
-- :account_id       the account
-- :pocket           'money' or an allowance pocket
-- :delta            the signed change of the pocket (micros for money, items otherwise)
-- :kind             top_up, bonus, debit, capture, refund, refill or adjustment
-- :amount_after     the pocket's amount after the change
-- :available_after  amount after minus held, or NULL
-- :buffer_micros    the money pocket's overdraft buffer when written, or NULL
-- :reference        a job id, a top-up's entry id, or NULL
-- :now              the time of the entry (database clock, micros)
-- :actor            who caused it (see migration 0007)
INSERT INTO ledger (account_id, pocket, delta, kind, amount_after, available_after, buffer, ref, created_at, actor)
VALUES (:account_id, :pocket, :delta, :kind, :amount_after, :available_after, :buffer_micros, :reference, :now, :actor)
RETURNING entry_id
