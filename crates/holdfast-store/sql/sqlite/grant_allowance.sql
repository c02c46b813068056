-- grant_allowance: an operator's grant of allowance items: the pocket, its grant ledger
-- entry carrying the client's key (ledger_by_key: a key the unit of work read as free
-- and found taken here is a unique violation, corruption) and the allowance.granted
-- event. Returns the entry's id and the pocket's remaining as written.
--
-- :account_id       the account
-- :pocket           the allowance pocket
-- :amount           the items granted (positive)
-- :amount_after     the pocket's remaining after, as decided
-- :available_after  remaining minus held after
-- :key              the client's idempotency key
-- :request_hash     the hash of the normalised request, for replays
-- :event_data       the allowance.granted event's data, JSON text
-- :now              the time (database clock, micros)
-- :actor            who caused it (see migration 0007)
UPDATE allowances
   SET remaining = remaining + :amount
 WHERE account_id = :account_id AND pocket = :pocket;

INSERT INTO ledger (account_id, pocket, delta, kind, amount_after, available_after, buffer, ref,
                    created_at, actor, idempotency_key, request_hash)
SELECT :account_id, :pocket, :amount, 'grant', :amount_after, :available_after, NULL, NULL, :now,
       :actor, :key, :request_hash
 WHERE changes() = 1;

INSERT INTO events (type, account_id, job_id, data, created_at, actor)
SELECT 'allowance.granted', :account_id, NULL, :event_data, :now, :actor
 WHERE changes() = 1;

SELECT (SELECT entry_id FROM ledger
         WHERE account_id = :account_id AND idempotency_key = :key) AS entry_id,
       (SELECT remaining FROM allowances
         WHERE account_id = :account_id AND pocket = :pocket) AS remaining_after;
