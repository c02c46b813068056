-- refund_job: a refund of (part of) a job's charge in ONE statement: the pocket it was
-- charged from (money: balance up, total_spent down, suspension; an allowance: remaining
-- up), the job_refund ledger entry (ref = the job) carrying the client's key
-- (ledger_by_key: a key the unit of work read as free and found taken here is a unique
-- violation, corruption), the job's refunded lines and the job.refunded event. Returns
-- the job as written with the entry's id.
--
-- :account_id            the job's account
-- :money_micros          the money given back (0 for an allowance refund)
-- :suspended_at          the account's suspended_at after it
-- :pocket                the allowance pocket given back to, or NULL
-- :pocket_delta          the items given back to it (0 for money)
-- :entry_pocket          the entry's pocket
-- :entry_delta           the entry's delta (positive)
-- :entry_amount_after    the pocket's amount after
-- :entry_available_after amount after minus held
-- :entry_buffer_micros   the money buffer on the entry, or NULL
-- :entry_blocks          the credit blocks given back to, JSON text, or NULL
-- :job_id                the job (also the entry's reference)
-- :refunded              what the job has been refunded in all, JSON lines
-- :key                   the client's idempotency key
-- :request_hash          the hash of the normalised request, for replays
-- :event_data            the job.refunded event's data, JSON text
-- :now                   the time (database clock, micros)
-- :actor                 who caused it (see migration 0007)
WITH refunded_money AS (
    UPDATE accounts
       SET balance = balance + :money_micros,
           total_spent = total_spent - :money_micros,
           suspended_at = :suspended_at
     -- even when no money moves: a refund of allowance items changes a pocket, and
     -- every such change updates the account's row (see ingest_lock_accounts)
     WHERE account_id = :account_id
),
refunded_pocket AS (
    UPDATE allowances
       SET remaining = remaining + :pocket_delta
     WHERE account_id = :account_id AND pocket = :pocket
),
refund_entry AS (
    INSERT INTO ledger (account_id, pocket, delta, kind, amount_after, available_after, buffer, ref,
                        created_at, actor, idempotency_key, request_hash, blocks)
    VALUES (:account_id, :entry_pocket, :entry_delta, 'job_refund', :entry_amount_after,
            :entry_available_after, :entry_buffer_micros::bigint, :job_id, :now, :actor, :key,
            :request_hash, :entry_blocks)
    RETURNING entry_id
),
refund_event AS (
    INSERT INTO events (type, account_id, job_id, data, created_at, actor)
    VALUES ('job.refunded', :account_id, :job_id, :event_data, :now, :actor)
),
refunded_job AS (
    UPDATE jobs SET refunded = :refunded WHERE job_id = :job_id
    RETURNING *
)
SELECT refunded_job.*,
       (SELECT entry_id FROM refund_entry) AS entry_id
  FROM refunded_job
