-- ledger_entry_amount_after: the pocket amount one ledger entry left.
--
-- :entry_id  the ledger entry
SELECT amount_after
FROM ledger
WHERE entry_id = :entry_id
