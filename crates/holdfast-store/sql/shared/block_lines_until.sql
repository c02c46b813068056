-- block_lines_until: what the ledger entries of an account up to one entry moved of its
-- credit blocks (balance at a time: each block's remaining then), oldest first.
--
-- :account_id  the account
-- :last_entry  the last entry that counts
SELECT delta, blocks
  FROM ledger
 WHERE account_id = :account_id AND entry_id <= :last_entry AND blocks IS NOT NULL
 ORDER BY entry_id
