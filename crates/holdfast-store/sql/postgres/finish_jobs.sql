-- finish_jobs: the jobs of a worker's batched complete or fail end in ONE statement,
-- each exactly as finish_job ends one: the account rows (money holds released,
-- captures taken; each account once, the sum of its jobs), the allowance pockets (each
-- pocket once), each capture's ledger entry and each job's end event in the order
-- given (so entry ids and event ids follow the order the jobs were decided in), and the
-- job rows. Returns the jobs as written, each with the number of capture entries its
-- job now has (1 when it was charged, else 0), which the caller checks.
--
-- :items  the jobs, a JSON array of objects with finish_job's parameters by name:
--         account_id, balance_delta_micros, money_held_delta_micros, spent_micros,
--         suspended_at (after this job), pocket, pocket_held_delta,
--         pocket_remaining_delta, entry_pocket, entry_delta, entry_amount_after,
--         entry_available_after, entry_buffer_micros, job_id, now, status, charged,
--         finished_by, failure_reason, event_type, event_data, actor
WITH item AS (
    SELECT *
      FROM ROWS FROM (jsonb_to_recordset(:items::jsonb) AS (
               account_id text, balance_delta_micros bigint, money_held_delta_micros bigint,
               spent_micros bigint, suspended_at bigint, pocket text, pocket_held_delta bigint,
               pocket_remaining_delta bigint, entry_pocket text, entry_delta bigint,
               entry_amount_after bigint, entry_available_after bigint,
               entry_buffer_micros bigint, job_id text, now bigint, status text, charged text,
               finished_by text, failure_reason text, event_type text, event_data text,
               actor text))
           WITH ORDINALITY AS item(
               account_id, balance_delta_micros, money_held_delta_micros, spent_micros,
               suspended_at, pocket, pocket_held_delta, pocket_remaining_delta, entry_pocket,
               entry_delta, entry_amount_after, entry_available_after, entry_buffer_micros,
               job_id, now, status, charged, finished_by, failure_reason, event_type,
               event_data, actor, ord)
),
account_change AS (
    SELECT account_id,
           SUM(balance_delta_micros) AS balance_delta,
           SUM(money_held_delta_micros) AS held_delta,
           SUM(spent_micros) AS spent,
           (array_agg(suspended_at ORDER BY ord DESC))[1] AS suspended_at
      FROM item
     WHERE balance_delta_micros <> 0 OR money_held_delta_micros <> 0
     GROUP BY account_id
),
released_money AS (
    UPDATE accounts
       SET balance = accounts.balance + account_change.balance_delta,
           held = accounts.held + account_change.held_delta,
           total_spent = accounts.total_spent + account_change.spent,
           suspended_at = account_change.suspended_at
      FROM account_change
     WHERE accounts.account_id = account_change.account_id
       -- the same accounts again as an array: an index scan, not a hash join over all
       AND accounts.account_id = ANY (ARRAY(SELECT account_id FROM account_change))
),
pocket_change AS (
    SELECT account_id, pocket,
           SUM(pocket_held_delta) AS held_delta,
           SUM(pocket_remaining_delta) AS remaining_delta
      FROM item
     WHERE pocket IS NOT NULL
     GROUP BY account_id, pocket
),
released_pocket AS (
    UPDATE allowances
       SET held = allowances.held + pocket_change.held_delta,
           remaining = allowances.remaining + pocket_change.remaining_delta
      FROM pocket_change
     WHERE allowances.account_id = pocket_change.account_id
       AND allowances.pocket = pocket_change.pocket
),
capture_entry AS (
    INSERT INTO ledger (account_id, pocket, delta, kind, amount_after, available_after, buffer, ref, created_at, actor)
    SELECT account_id, entry_pocket, entry_delta, 'capture', entry_amount_after,
           entry_available_after, entry_buffer_micros, job_id, now, actor
      FROM item
     WHERE entry_delta <> 0
     ORDER BY ord
    RETURNING ref
),
end_event AS (
    INSERT INTO events (type, account_id, job_id, data, created_at, actor)
    SELECT event_type, account_id, job_id, event_data, now, actor
      FROM item
     ORDER BY ord
),
finished_job AS (
    UPDATE jobs
       SET status = item.status,
           charged = item.charged,
           finished_at = item.now,
           finished_by = item.finished_by,
           failure_reason = item.failure_reason,
           finished_by_actor = item.actor
      FROM item
     WHERE jobs.job_id = item.job_id
       AND jobs.job_id = ANY (ARRAY(SELECT job_id FROM item))
    RETURNING jobs.*
)
SELECT finished_job.*,
       (SELECT COUNT(*) FROM capture_entry WHERE capture_entry.ref = finished_job.job_id) AS captures
  FROM finished_job
