-- write_block: a credit block as a unit of work leaves it (drawn, held, released, given
-- back, written off), under its account's lock.
--
-- :block_id   the block
-- :remaining  what is left of it
-- :held       what open holds reserved of it
UPDATE credit_blocks SET remaining = :remaining, held = :held WHERE block_id = :block_id
