-- save_block_checkpoint: reconciliation's checkpoint of a credit block: the signed sum
-- of the ledger lines naming it up to an entry.
--
-- :block_id           the block
-- :checked_entry_id   the last entry counted
-- :checked_remaining  the sum up to it
UPDATE credit_blocks
   SET checked_entry_id = :checked_entry_id, checked_remaining = :checked_remaining
 WHERE block_id = :block_id
