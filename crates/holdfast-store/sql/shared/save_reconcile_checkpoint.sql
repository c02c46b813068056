-- save_reconcile_checkpoint: records a pocket's ledger sums up to an entry, so the next
-- run reads only the entries after it.
--
-- :account_id         the account
-- :pocket             the pocket (money or an allowance)
-- :last_entry_id      the last entry the sums cover
-- :ledger_sum         sum of delta up to it
-- :credited_sum       sum of delta of top_up and bonus entries up to it
-- :spent_sum          sum of -delta of money debit and capture entries up to it
-- :checked_at_micros  the database clock: when it was checked
INSERT INTO reconcile_checkpoints
  (account_id, pocket, last_entry_id, ledger_sum, credited_sum, spent_sum, checked_at)
VALUES
  (:account_id, :pocket, :last_entry_id, :ledger_sum, :credited_sum, :spent_sum, :checked_at_micros)
ON CONFLICT (account_id, pocket) DO UPDATE
SET last_entry_id = excluded.last_entry_id,
    ledger_sum = excluded.ledger_sum,
    credited_sum = excluded.credited_sum,
    spent_sum = excluded.spent_sum,
    checked_at = excluded.checked_at
