-- set_entry_blocks: the blocks a ledger entry moved, where they are known only once the
-- entry is written (a credit's block takes the entry's id).
--
-- :entry_id  the entry
-- :blocks    JSON [{"block", "amount"}]
UPDATE ledger SET blocks = :blocks WHERE entry_id = :entry_id
