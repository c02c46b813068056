-- refill_pocket: an allowance pocket refilled to its quota; a new cycle starts now.
--
-- :account_id  the account
-- :pocket      the allowance pocket
-- :quota       the effective plan's quota
-- :now         the start of the new cycle (database clock, micros)
UPDATE allowances
   SET remaining = :quota,
       cycle_started_at = :now
 WHERE account_id = :account_id AND pocket = :pocket
