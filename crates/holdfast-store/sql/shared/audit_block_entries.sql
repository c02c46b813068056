-- audit_block_entries: every ledger entry that names credit blocks, for invariant 9
-- (each block's remaining is the sum of what its entries moved).
SELECT entry_id, account_id, delta, blocks
  FROM ledger
 WHERE blocks IS NOT NULL
 ORDER BY entry_id
