-- blocks_to_reconcile: an account's credit blocks the expiry pass has not closed (those
-- that hold nothing included: their ledger may say otherwise), with reconciliation's
-- checkpoint of each.
--
-- :account_id  the account
SELECT block_id, category, priority, expires_at, created_at, granted, remaining, held,
       checked_entry_id, checked_remaining
  FROM credit_blocks
 WHERE account_id = :account_id AND closed_at IS NULL
 ORDER BY block_id
