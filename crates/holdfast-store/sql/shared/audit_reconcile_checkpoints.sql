-- audit_reconcile_checkpoints: every reconcile checkpoint beside the actual sum of its
-- pocket's ledger up to the entry it names.
SELECT checkpoint.account_id,
       checkpoint.pocket,
       checkpoint.last_entry_id,
       checkpoint.ledger_sum,
       COALESCE((
         SELECT CAST(SUM(entry.delta) AS BIGINT)
         FROM ledger AS entry
         WHERE entry.account_id = checkpoint.account_id
           AND entry.pocket = checkpoint.pocket
           AND entry.entry_id <= checkpoint.last_entry_id
       ), 0) AS actual
FROM reconcile_checkpoints AS checkpoint
