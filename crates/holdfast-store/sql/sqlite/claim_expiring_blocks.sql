-- claim_expiring_blocks: marks the open credit blocks that expire within the notice
-- window as told (once: only blocks not told yet), the soonest first; returns them for
-- credit.expiring. A block that holds nothing is not told. (SQLite: one writer, so no
-- row is locked by another transaction.)
--
-- :now    the database clock (micros)
-- :until  the end of the window: now + the card's credit_expiring_notice_days
-- :limit  at most this many blocks
WITH due AS (
  SELECT block_id
    FROM credit_blocks
   WHERE expires_at > :now AND expires_at <= :until AND closed_at IS NULL
     AND expiring_noticed_at IS NULL AND remaining > 0
   ORDER BY expires_at
   LIMIT :limit
)
UPDATE credit_blocks
   SET expiring_noticed_at = :now
 WHERE block_id IN (SELECT block_id FROM due) AND expiring_noticed_at IS NULL
RETURNING block_id, account_id, category, priority, expires_at, created_at, granted,
          remaining, held
