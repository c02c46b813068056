-- read_reconcile_checkpoint: a pocket's reconcile checkpoint: its ledger sums up to an
-- entry.
--
-- :account_id  the account
-- :pocket      the pocket (money or an allowance)
SELECT last_entry_id, ledger_sum, credited_sum, spent_sum
FROM reconcile_checkpoints
WHERE account_id = :account_id
  AND pocket = :pocket
