-- block_lines_after_entry: the entries of an account after an entry that name credit
-- blocks (ledger_by_account), oldest first: what each moved of which block.
--
-- :account_id      the account
-- :after_entry_id  entries after this one
SELECT entry_id, delta, blocks
  FROM ledger
 WHERE account_id = :account_id AND entry_id > :after_entry_id AND blocks IS NOT NULL
 ORDER BY entry_id
