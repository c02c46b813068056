-- finish_jobs: jobs end in ONE statement — one job (a worker's complete or fail, a
-- cancel, the sweeper's expiry, a ban's cancel) or a worker's batch: the account rows
-- (money holds released, captures taken, suspension; each account once, the sum of its
-- jobs), the allowance pockets (holds released, captures taken; each pocket once), each
-- capture's ledger entry and each job's end event in the order given (so entry ids and
-- event ids follow the order the jobs were decided in), and the job rows (a sweep also
-- drops the lease token). Returns the jobs as written, each with the number of capture
-- entries the statement wrote for it (1 when it was charged, else 0), which the caller
-- checks, and that entry's id.
--
-- The items come as one array of the composite type finish_item (migration 0015),
-- bound as such (nothing to parse), through a sub-select: a generic plan cannot count
-- them, so PostgreSQL plans the statement once per connection, for one job as for a
-- batch (as ingest_write, docs/bench-history.md). The per-account and per-pocket sums
-- pass `LIMIT (SELECT NULL::bigint)`: no limit, but the planner, not seeing it,
-- estimates a row or so and probes the primary keys whatever the statistics say.
--
-- :items  the jobs, in the order decided: account_id, balance_delta_micros (minus the
--         money captured), money_held_delta_micros (minus the money hold released),
--         spent_micros (the money captured), suspended_at (the account's after this
--         job), pocket (the allowance pocket held, or NULL), pocket_held_delta,
--         pocket_remaining_delta (minus the actual decrease, floored at 0),
--         entry_pocket, entry_delta (0: no capture entry), entry_amount_after,
--         entry_available_after, entry_buffer_micros, job_id, now (the database clock),
--         status (succeeded, failed, canceled, expired), charged (JSON lines),
--         finished_by (complete, fail, cancel or sweep), failure_reason, event_type,
--         event_data (JSON text), actor (who ended it: see migration 0007),
--         entry_blocks (the credit blocks the capture took from, JSON text, or NULL)
WITH item AS (
    SELECT *
      FROM unnest((SELECT :items::finish_item[])) WITH ORDINALITY AS item(
               account_id, balance_delta_micros, money_held_delta_micros, spent_micros,
               suspended_at, pocket, pocket_held_delta, pocket_remaining_delta, entry_pocket,
               entry_delta, entry_amount_after, entry_available_after, entry_buffer_micros,
               job_id, now, status, charged, finished_by, failure_reason, event_type,
               event_data, actor, entry_blocks, ord)
),
released_money AS (
    UPDATE accounts
       SET balance = accounts.balance + account_change.balance_delta,
           held = accounts.held + account_change.held_delta,
           total_spent = accounts.total_spent + account_change.spent,
           suspended_at = account_change.suspended_at
      FROM (SELECT account_id,
                   SUM(balance_delta_micros) AS balance_delta,
                   SUM(money_held_delta_micros) AS held_delta,
                   SUM(spent_micros) AS spent,
                   (array_agg(suspended_at ORDER BY ord DESC))[1] AS suspended_at
              FROM item
             GROUP BY account_id
             LIMIT (SELECT NULL::bigint)) AS account_change
     WHERE accounts.account_id = account_change.account_id
),
released_pocket AS (
    UPDATE allowances
       SET held = allowances.held + pocket_change.held_delta,
           remaining = allowances.remaining + pocket_change.remaining_delta
      FROM (SELECT account_id, pocket,
                   SUM(pocket_held_delta) AS held_delta,
                   SUM(pocket_remaining_delta) AS remaining_delta
              FROM item
             WHERE pocket IS NOT NULL
             GROUP BY account_id, pocket
             LIMIT (SELECT NULL::bigint)) AS pocket_change
     WHERE allowances.account_id = pocket_change.account_id
       AND allowances.pocket = pocket_change.pocket
),
capture_entry AS (
    INSERT INTO ledger (account_id, pocket, delta, kind, amount_after, available_after, buffer, ref, created_at, actor,
                        blocks)
    SELECT account_id, entry_pocket, entry_delta, 'capture', entry_amount_after,
           entry_available_after, entry_buffer_micros, job_id, now, actor, entry_blocks
      FROM item
     WHERE entry_delta <> 0
     ORDER BY ord
    RETURNING entry_id, ref
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
           finished_by_actor = item.actor,
           lease_token = CASE WHEN item.finished_by = 'sweep' THEN NULL ELSE jobs.lease_token END
      FROM (SELECT * FROM item LIMIT (SELECT NULL::bigint)) AS item
     WHERE jobs.job_id = item.job_id
    RETURNING jobs.*
)
SELECT finished_job.*,
       (SELECT COUNT(*) FROM capture_entry WHERE capture_entry.ref = finished_job.job_id) AS captures,
       (SELECT MAX(entry_id) FROM capture_entry WHERE capture_entry.ref = finished_job.job_id) AS entry_id
  FROM finished_job
