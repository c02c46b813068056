-- entries_of_ref: an account's ledger entries with one ref (a job's capture and refunds,
-- a top-up's refunds), oldest first (the index ledger_by_ref).
--
-- :account_id  the account
-- :reference   the ref
-- :limit       at most this many
SELECT entry_id, account_id, pocket, delta, kind, amount_after, available_after, ref, created_at,
       actor, meter, seconds, blocks
  FROM ledger
 WHERE account_id = :account_id AND ref = :reference
 ORDER BY entry_id
 LIMIT :limit
