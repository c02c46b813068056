-- submit_jobs: the submits of a batch (the submit batcher's group commit) that were
-- decided to hold and queue, each exactly as submit_job writes one: the key's record,
-- the holds (each account row once with the sum of its money holds and the activity
-- stamp, each allowance pocket once), the jobs in the order given. The keys were read
-- under the write lock and are new, so the records are inserted plainly: a key taken
-- after all would fail the statement, and so the batch, as a whole. Returns the jobs as
-- written.
--
-- :items  the submits, a JSON array of objects with submit_job's parameters by name:
--         account_id, key, request_hash, job_id, kind, lane, payload (JSON text or
--         null), hold (JSON text), money_hold_micros, pocket, pocket_hold, now,
--         notice_at, limit_at_submit, open_at_submit, actor, currency
INSERT INTO idempotency (account_id, key, operation, request_hash, entry_id, job_id, created_at)
SELECT json_extract(value, '$.account_id'), json_extract(value, '$.key'), 'submit',
       json_extract(value, '$.request_hash'), NULL, json_extract(value, '$.job_id'),
       json_extract(value, '$.now')
  FROM json_each(:items);

UPDATE accounts
   SET held = accounts.held + account_hold.held_delta,
       last_active_at = account_hold.now
  FROM (SELECT json_extract(value, '$.account_id') AS account_id,
               SUM(json_extract(value, '$.money_hold_micros')) AS held_delta,
               MAX(json_extract(value, '$.now')) AS now
          FROM json_each(:items)
         GROUP BY 1) AS account_hold
 WHERE accounts.account_id = account_hold.account_id;

UPDATE allowances
   SET held = allowances.held + pocket_hold.held_delta
  FROM (SELECT json_extract(value, '$.account_id') AS account_id,
               json_extract(value, '$.pocket') AS pocket,
               SUM(json_extract(value, '$.pocket_hold')) AS held_delta
          FROM json_each(:items)
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
  FROM json_each(:items)
 WHERE true
 ORDER BY key
RETURNING *;
