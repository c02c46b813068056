-- The key of a money change is a column of its ledger entry (issue #43): a top-up,
-- bonus, refund, debit, job refund or grant is one row, found by (account_id,
-- idempotency_key) for as long as the ledger is kept (it is never pruned), where its
-- idempotency record used to be a second row pruned after `idempotency_days`. The
-- idempotency table keeps the keys that answer with something other than a ledger
-- entry: job submits. A key is unique per account across both (each write checks the
-- other place under the account lock).
--
-- request_hash is the first 16 hex digits (64 bits) of the request's SHA-256: what tells
-- a replay from another request under the same key; the records kept are cut to match.
--
-- ledger_by_pocket goes: reconciliation reads a pocket's entries after its checkpoint
-- by ledger_by_account (account_id, entry_id) and keeps the pocket's rows, reading the
-- account's other pockets' entries of the same stretch; every change of every balance
-- paid one more index entry for it.
ALTER TABLE ledger ADD COLUMN idempotency_key TEXT;
ALTER TABLE ledger ADD COLUMN request_hash TEXT;

UPDATE ledger
   SET idempotency_key = record.key,
       request_hash = substr(record.request_hash, 1, 16)
  FROM idempotency AS record
 WHERE record.entry_id = ledger.entry_id
   AND record.account_id = ledger.account_id
   AND record.operation IN ('top_up', 'bonus', 'debit', 'refund', 'job_refund', 'grant');

DELETE FROM idempotency
 WHERE operation IN ('top_up', 'bonus', 'debit', 'refund', 'job_refund', 'grant');

UPDATE idempotency SET request_hash = substr(request_hash, 1, 16);

CREATE UNIQUE INDEX ledger_by_key ON ledger (account_id, idempotency_key)
 WHERE idempotency_key IS NOT NULL;

DROP INDEX ledger_by_pocket;

-- Every key an account has used, wherever it lives: what a unit of work reads to tell a
-- replay (operation and hash), a key used by another operation, and a new key.
CREATE VIEW idempotency_keys AS
SELECT account_id, key, operation, request_hash, entry_id, job_id
  FROM idempotency
UNION ALL
SELECT account_id, idempotency_key, kind, request_hash, entry_id, NULL
  FROM ledger
 WHERE idempotency_key IS NOT NULL;

-- Money changes made before this mark may have lost their keys to the prune pass (as it
-- was before this migration); every one made since carries its key for good. The audit
-- (invariant 7) checks keys from here on.
INSERT INTO retention_marks (what, pruned_before, last_position)
SELECT 'ledger_keys', COALESCE(MAX(pruned_before), 0), NULL
  FROM retention_marks
 WHERE what = 'idempotency';
