-- write_block: a credit block as a unit of work leaves it (drawn, held, released, given
-- back, written off), under its account's lock. A block given back free money (a job
-- refund) is open again for the expiry pass, which closed it when it held nothing.
--
-- :block_id   the block
-- :remaining  what is left of it
-- :held       what open holds reserved of it
UPDATE credit_blocks
   SET remaining = CAST(:remaining AS BIGINT), held = CAST(:held AS BIGINT),
       closed_at = CASE WHEN CAST(:remaining AS BIGINT) > CAST(:held AS BIGINT) THEN NULL
                        ELSE closed_at END
 WHERE block_id = :block_id
