-- finish_jobs: the jobs of a worker's batched complete or fail end in ONE statement,
-- each exactly as finish_job ends one: the account rows (money holds released,
-- captures taken; each account once, the sum of its jobs), the allowance pockets (each
-- pocket once), each capture's ledger entry and each job's end event in the order
-- given (so entry ids and event ids follow the order the jobs were decided in), and the
-- job rows. Returns the jobs as written, each with the number of capture entries its
-- job now has (1 when it was charged, else 0), which the caller checks.
--
-- The jobs come as columns, one array per field of finish_job's parameters, all of one
-- length and in the order given, bound as arrays (nothing to parse): :account_ids,
-- :balance_deltas, :money_held_deltas, :spent, :suspended_ats (after this job),
-- :pockets, :pocket_held_deltas, :pocket_remaining_deltas, :entry_pockets,
-- :entry_deltas, :entry_amounts_after, :entry_availables_after, :entry_buffers,
-- :job_ids, :nows, :statuses, :charged, :finished_by, :failure_reasons, :event_types,
-- :event_data, :actors
WITH item AS (
    SELECT *
      FROM unnest(:account_ids::text[], :balance_deltas::bigint[],
                  :money_held_deltas::bigint[], :spent::bigint[], :suspended_ats::bigint[],
                  :pockets::text[], :pocket_held_deltas::bigint[],
                  :pocket_remaining_deltas::bigint[], :entry_pockets::text[],
                  :entry_deltas::bigint[], :entry_amounts_after::bigint[],
                  :entry_availables_after::bigint[], :entry_buffers::bigint[],
                  :job_ids::text[], :nows::bigint[], :statuses::text[], :charged::text[],
                  :finished_by::text[], :failure_reasons::text[], :event_types::text[],
                  :event_data::text[], :actors::text[])
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
     -- every account, money moved or not: a job that ends changes the account's open
     -- jobs, and every such change updates the account's row (see ingest_lock_accounts)
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
       -- the same accounts again as an array: an index scan, not a hash join over every
       -- pocket of every account
       AND allowances.account_id = ANY (ARRAY(SELECT account_id FROM pocket_change))
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
