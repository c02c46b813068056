-- submit_jobs: the submits of a batch (the submit batcher's group commit) that were
-- decided to hold and queue, in ONE statement, each exactly as submit_job writes one:
-- the key's record, the holds (each account row once with the sum of its money holds
-- and the activity stamp, each allowance pocket once), the jobs in the order given.
-- The keys were read with the accounts locked and are new, so the records are inserted
-- plainly: a key taken after all would fail the statement, and so the batch, as a whole.
-- Returns the jobs as written.
--
-- The submits come as columns, one array per field of submit_job's parameters, all of
-- one length and in the order given, bound as arrays (nothing to parse):
-- :account_ids, :keys, :request_hashes, :job_ids, :kinds, :lanes, :payloads (JSON text
-- or null), :holds (JSON text), :money_hold_micros, :pockets, :pocket_holds, :nows,
-- :notice_ats, :limits_at_submit, :open_at_submit, :actors, :currencies
WITH item AS (
    SELECT *
      FROM unnest(:account_ids::text[], :keys::text[], :request_hashes::text[],
                  :job_ids::text[], :kinds::text[], :lanes::text[], :payloads::text[],
                  :holds::text[], :money_hold_micros::bigint[], :pockets::text[],
                  :pocket_holds::bigint[], :nows::bigint[], :notice_ats::bigint[],
                  :limits_at_submit::bigint[], :open_at_submit::bigint[], :actors::text[],
                  :currencies::text[])
           WITH ORDINALITY AS item(
               account_id, key, request_hash, job_id, kind, lane, payload, hold,
               money_hold_micros, pocket, pocket_hold, now, notice_at, limit_at_submit,
               open_at_submit, actor, currency, ord)
),
claimed_key AS (
    INSERT INTO idempotency (account_id, key, operation, request_hash, entry_id, job_id, created_at)
    SELECT account_id, key, 'submit', request_hash, NULL, job_id, now
      FROM item
),
account_hold AS (
    SELECT account_id, SUM(money_hold_micros) AS held, MAX(now) AS now
      FROM item
     GROUP BY account_id
),
held_money AS (
    UPDATE accounts
       SET held = accounts.held + account_hold.held,
           last_active_at = account_hold.now
      FROM account_hold
     WHERE accounts.account_id = account_hold.account_id
       -- the same accounts again as an array: an index scan, not a hash join over all
       AND accounts.account_id = ANY (ARRAY(SELECT account_id FROM account_hold))
),
pocket_hold AS (
    SELECT account_id, pocket, SUM(pocket_hold) AS held
      FROM item
     WHERE pocket IS NOT NULL
     GROUP BY account_id, pocket
),
held_pocket AS (
    UPDATE allowances
       SET held = allowances.held + pocket_hold.held
      FROM pocket_hold
     WHERE allowances.account_id = pocket_hold.account_id
       AND allowances.pocket = pocket_hold.pocket
       -- the same accounts again as an array: an index scan, not a hash join over every
       -- pocket of every account
       AND allowances.account_id = ANY (ARRAY(SELECT account_id FROM pocket_hold))
)
INSERT INTO jobs (job_id, account_id, kind, lane, status, payload, hold, created_at, notice_at,
                  limit_at_submit, open_at_submit, queued_since, submitted_by_actor, currency)
SELECT job_id, account_id, kind, lane, 'queued', payload, hold, now, notice_at,
       limit_at_submit, open_at_submit, now, actor, currency
  FROM item
 ORDER BY ord
RETURNING *
