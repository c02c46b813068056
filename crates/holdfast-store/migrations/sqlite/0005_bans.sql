-- Bans: an operator's ban of an account (no new work, no debits; its queued jobs are
-- canceled when it is banned). NULL = not banned.
ALTER TABLE accounts ADD COLUMN banned_at INTEGER;
