-- submit_jobs: the submits of a set-based call (one submit or a batch) that were decided
-- to hold and queue, in ONE statement: each key's record, the holds (each account row
-- once with the sum of its money holds and the activity stamp, each allowance pocket
-- once), the jobs in the order given. Returns the jobs as written.
--
-- The keys are claimed by the INSERT: a key some earlier submit used fails the statement
-- with a unique violation (idempotency_pkey); one a money change used (its ledger entry
-- carries it: migration 0011) is not claimed, and its job is not inserted, so the jobs
-- come back short of the items. Either way the caller rolls back and redoes the call
-- reading its keys first.
--
-- The items come as one array of the composite type submit_item (migration 0015),
-- bound as such (nothing to parse), through a sub-select: a generic plan cannot count
-- them, so PostgreSQL plans the statement once per connection, for a call of one as for
-- a batch (as ingest_write, docs/bench-history.md). The per-account sums pass
-- `LIMIT (SELECT NULL::bigint)`: no limit, but the planner, not seeing it, estimates a
-- row or so and probes the primary keys whatever the statistics say.
--
-- :items  the submits, in the order decided: account_id, key, request_hash, job_id,
--         kind, lane, payload (JSON text or NULL), hold (JSON text), money_hold_micros,
--         pocket (or NULL) and pocket_hold, now (the database clock as the account was
--         read: created_at and last_active_at), notice_at, limit_at_submit,
--         open_at_submit, actor (who submitted it: see migration 0007), currency
WITH item AS (
    SELECT *
      FROM unnest((SELECT :items::submit_item[])) WITH ORDINALITY AS item(
               account_id, key, request_hash, job_id, kind, lane, payload, hold,
               money_hold_micros, pocket, pocket_hold, now, notice_at, limit_at_submit,
               open_at_submit, actor, currency, ord)
),
claimed_key AS (
    INSERT INTO idempotency (account_id, key, operation, request_hash, entry_id, job_id, created_at)
    SELECT account_id, key, 'submit', request_hash, NULL, job_id, now
      FROM item
     WHERE NOT EXISTS (SELECT 1 FROM ledger
                        WHERE ledger.account_id = item.account_id
                          AND ledger.idempotency_key = item.key
                       OFFSET 0)
    RETURNING job_id
),
held_money AS (
    UPDATE accounts
       SET held = accounts.held + account_hold.held,
           last_active_at = account_hold.now
      FROM (SELECT account_id, SUM(money_hold_micros) AS held, MAX(now) AS now
              FROM item
             GROUP BY account_id
             LIMIT (SELECT NULL::bigint)) AS account_hold
     WHERE accounts.account_id = account_hold.account_id
),
held_pocket AS (
    UPDATE allowances
       SET held = allowances.held + pocket_hold.held
      FROM (SELECT account_id, pocket, SUM(pocket_hold) AS held
              FROM item
             WHERE pocket IS NOT NULL
             GROUP BY account_id, pocket
             LIMIT (SELECT NULL::bigint)) AS pocket_hold
     WHERE allowances.account_id = pocket_hold.account_id
       AND allowances.pocket = pocket_hold.pocket
)
INSERT INTO jobs (job_id, account_id, kind, lane, status, payload, hold, created_at, notice_at,
                  limit_at_submit, open_at_submit, queued_since, submitted_by_actor, currency)
SELECT job_id, account_id, kind, lane, 'queued', payload, hold, now, notice_at,
       limit_at_submit, open_at_submit, now, actor, currency
  FROM item
 WHERE job_id IN (SELECT job_id FROM claimed_key)
 ORDER BY ord
RETURNING *
