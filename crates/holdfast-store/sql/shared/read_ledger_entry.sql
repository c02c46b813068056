-- read_ledger_entry: one ledger entry by id.
--
-- :entry_id  the entry
SELECT entry_id, account_id, pocket, delta, kind, amount_after, available_after, ref, created_at,
       actor, meter, seconds, blocks
  FROM ledger
 WHERE entry_id = :entry_id
