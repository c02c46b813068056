-- insert_block: the block a credit with terms made, under the account's lock; its id is
-- the credit's ledger entry's.
--
-- :block_id    the credit's entry id
-- :account_id  the account
-- :category    paid or promotional
-- :priority    0 to 100
-- :expires_at  when it expires, or NULL
-- :now         the credit's time
-- :granted     what the block keeps of the credit (after the account's debt)
INSERT INTO credit_blocks (block_id, account_id, category, priority, expires_at, created_at,
                           granted, remaining, held)
VALUES (:block_id, :account_id, :category, :priority, :expires_at, :now, :granted, :granted, 0)
