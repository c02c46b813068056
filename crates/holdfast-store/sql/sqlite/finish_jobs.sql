-- finish_jobs: jobs end — one job (a worker's complete or fail, a cancel, the
-- sweeper's expiry, a ban's cancel) or a worker's batch: the account rows (money holds
-- released, captures taken, suspension; each account once, the sum of its jobs), the
-- allowance pockets (each pocket once), each capture's ledger entry and each job's end
-- event in the order given (so entry ids and event ids follow the order the jobs were
-- decided in), and the job rows (a sweep also drops the lease token). Returns the jobs
-- as written, each with the number of capture entries its job now has (1 when it was
-- charged, else 0), which the caller checks, and that entry's id.
--
-- :items  the jobs, a JSON array of objects, in the order decided: account_id,
--         balance_delta_micros, money_held_delta_micros, spent_micros, suspended_at
--         (after this job), pocket, pocket_held_delta, pocket_remaining_delta,
--         entry_pocket, entry_delta, entry_amount_after, entry_available_after,
--         entry_buffer_micros, job_id, now, status, charged, finished_by,
--         failure_reason, event_type, event_data, actor, entry_blocks (see the
--         PostgreSQL statement)
UPDATE accounts
   SET balance = balance + account_change.balance_delta,
       held = held + account_change.held_delta,
       total_spent = total_spent + account_change.spent,
       suspended_at = account_change.suspended_at
  FROM (SELECT json_extract(value, '$.account_id') AS account_id,
               SUM(json_extract(value, '$.balance_delta_micros')) AS balance_delta,
               SUM(json_extract(value, '$.money_held_delta_micros')) AS held_delta,
               SUM(json_extract(value, '$.spent_micros')) AS spent,
               -- with max(), SQLite takes the bare column from the row of the maximum:
               -- the account's last job's suspended_at
               MAX(key) AS last,
               json_extract(value, '$.suspended_at') AS suspended_at
          FROM jsonb_each(:items)
         WHERE json_extract(value, '$.balance_delta_micros') <> 0
            OR json_extract(value, '$.money_held_delta_micros') <> 0
         GROUP BY 1) AS account_change
 WHERE accounts.account_id = account_change.account_id;

UPDATE allowances
   SET held = held + pocket_change.held_delta,
       remaining = remaining + pocket_change.remaining_delta
  FROM (SELECT json_extract(value, '$.account_id') AS account_id,
               json_extract(value, '$.pocket') AS pocket,
               SUM(json_extract(value, '$.pocket_held_delta')) AS held_delta,
               SUM(json_extract(value, '$.pocket_remaining_delta')) AS remaining_delta
          FROM jsonb_each(:items)
         WHERE json_extract(value, '$.pocket') IS NOT NULL
         GROUP BY 1, 2) AS pocket_change
 WHERE allowances.account_id = pocket_change.account_id
   AND allowances.pocket = pocket_change.pocket;

INSERT INTO ledger (account_id, pocket, delta, kind, amount_after, available_after, buffer, ref, created_at, actor,
                    blocks)
SELECT json_extract(value, '$.account_id'), json_extract(value, '$.entry_pocket'),
       json_extract(value, '$.entry_delta'), 'capture', json_extract(value, '$.entry_amount_after'),
       json_extract(value, '$.entry_available_after'), json_extract(value, '$.entry_buffer_micros'),
       json_extract(value, '$.job_id'), json_extract(value, '$.now'), json_extract(value, '$.actor'),
       json_extract(value, '$.entry_blocks')
  FROM jsonb_each(:items)
 WHERE json_extract(value, '$.entry_delta') <> 0
 ORDER BY key;

INSERT INTO events (type, account_id, job_id, data, created_at, actor)
SELECT json_extract(value, '$.event_type'), json_extract(value, '$.account_id'),
       json_extract(value, '$.job_id'), json_extract(value, '$.event_data'),
       json_extract(value, '$.now'), json_extract(value, '$.actor')
  FROM jsonb_each(:items)
 ORDER BY key;

UPDATE jobs
   SET status = json_extract(item.value, '$.status'),
       charged = json_extract(item.value, '$.charged'),
       finished_at = json_extract(item.value, '$.now'),
       finished_by = json_extract(item.value, '$.finished_by'),
       failure_reason = json_extract(item.value, '$.failure_reason'),
       finished_by_actor = json_extract(item.value, '$.actor'),
       lease_token = CASE WHEN json_extract(item.value, '$.finished_by') = 'sweep' THEN NULL
                          ELSE lease_token END
  FROM jsonb_each(:items) AS item
 WHERE jobs.job_id = json_extract(item.value, '$.job_id')
RETURNING *,
          (SELECT COUNT(*) FROM ledger
            WHERE ledger.account_id = jobs.account_id AND ledger.ref = jobs.job_id
              AND ledger.kind = 'capture') AS captures,
          (SELECT MAX(entry_id) FROM ledger
            WHERE ledger.account_id = jobs.account_id AND ledger.ref = jobs.job_id
              AND ledger.kind = 'capture') AS entry_id;
