-- submit_jobs: the submits of a set-based call (one submit or a batch) that were decided
-- to hold and queue: each key's record, the holds (each account row once with the sum
-- of its money holds and the activity stamp, each allowance pocket once), the jobs in
-- the order given. Returns the jobs as written.
--
-- The keys are claimed by the first INSERT: a key some earlier submit used fails it with
-- a unique violation (idempotency's primary key); one a money change used (its ledger
-- entry carries it: migration 0011) is not claimed, and its job is not inserted (the
-- jobs are those whose keys' records name them), so the jobs come back short of the
-- items. Either way the caller rolls back and redoes the call reading its keys first.
--
-- :items  the submits, a JSON array of objects: account_id, key, request_hash, job_id,
--         kind, lane, payload (JSON text or null), hold (JSON text), money_hold_micros,
--         pocket (or null) and pocket_hold, now (the database clock as the account was
--         read: created_at and last_active_at), notice_at, limit_at_submit,
--         open_at_submit, actor (who submitted it: see migration 0007), currency
INSERT INTO idempotency (account_id, key, operation, request_hash, entry_id, job_id, created_at)
SELECT json_extract(value, '$.account_id'), json_extract(value, '$.key'), 'submit',
       json_extract(value, '$.request_hash'), NULL, json_extract(value, '$.job_id'),
       json_extract(value, '$.now')
  FROM jsonb_each(:items)
 WHERE NOT EXISTS (SELECT 1 FROM ledger
                    WHERE ledger.account_id = json_extract(value, '$.account_id')
                      AND ledger.idempotency_key = json_extract(value, '$.key'));

UPDATE accounts
   SET held = accounts.held + account_hold.held_delta,
       last_active_at = account_hold.now
  FROM (SELECT json_extract(value, '$.account_id') AS account_id,
               SUM(json_extract(value, '$.money_hold_micros')) AS held_delta,
               MAX(json_extract(value, '$.now')) AS now
          FROM jsonb_each(:items)
         GROUP BY 1) AS account_hold
 WHERE accounts.account_id = account_hold.account_id;

UPDATE allowances
   SET held = allowances.held + pocket_hold.held_delta
  FROM (SELECT json_extract(value, '$.account_id') AS account_id,
               json_extract(value, '$.pocket') AS pocket,
               SUM(json_extract(value, '$.pocket_hold')) AS held_delta
          FROM jsonb_each(:items)
         WHERE json_extract(value, '$.pocket') IS NOT NULL
         GROUP BY 1, 2) AS pocket_hold
 WHERE allowances.account_id = pocket_hold.account_id
   AND allowances.pocket = pocket_hold.pocket;

INSERT INTO jobs (job_id, account_id, kind, lane, status, payload, hold, created_at, notice_at,
                  limit_at_submit, open_at_submit, queued_since, submitted_by_actor, currency)
SELECT json_extract(value, '$.job_id'), json_extract(value, '$.account_id'),
       json_extract(value, '$.kind'), json_extract(value, '$.lane'), 'queued',
       json_extract(value, '$.payload'), json_extract(value, '$.hold'), json_extract(value, '$.now'),
       json_extract(value, '$.notice_at'), json_extract(value, '$.limit_at_submit'),
       json_extract(value, '$.open_at_submit'), json_extract(value, '$.now'),
       json_extract(value, '$.actor'), json_extract(value, '$.currency')
  FROM jsonb_each(:items)
 WHERE EXISTS (SELECT 1 FROM idempotency
                WHERE idempotency.account_id = json_extract(value, '$.account_id')
                  AND idempotency.key = json_extract(value, '$.key')
                  AND idempotency.job_id = json_extract(value, '$.job_id'))
 ORDER BY key
RETURNING *;
