-- audit_live_blocks: each account's live credit blocks as its row keeps them
-- (accounts.live_blocks), for invariant 10: they are its blocks that hold money.
SELECT account_id, live_blocks
  FROM accounts
 WHERE has_blocks = 1 OR live_blocks IS NOT NULL
 ORDER BY account_id
