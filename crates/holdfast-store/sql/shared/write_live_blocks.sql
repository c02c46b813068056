-- write_live_blocks: an account's credit blocks that hold money, as a unit of work that
-- made or changed some left them (accounts.live_blocks, migration 0019: what the
-- set-based statements read with the account's lock); the account has blocks from now
-- on (has_blocks), so its other reads read them too.
--
-- :account_id   the account
-- :live_blocks  JSON: [[block_id, category, priority, expires_at, created_at, granted,
--               remaining, held], ...], by block_id
UPDATE accounts SET has_blocks = 1, live_blocks = :live_blocks WHERE account_id = :account_id
