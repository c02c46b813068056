-- audit_blocks: every credit block, with whether its account knows it has blocks, for
-- invariant 9 (docs/DESIGN.md).
SELECT b.block_id, b.account_id, b.granted, b.remaining, b.held, a.has_blocks
  FROM credit_blocks AS b
  JOIN accounts AS a ON a.account_id = b.account_id
 ORDER BY b.block_id
