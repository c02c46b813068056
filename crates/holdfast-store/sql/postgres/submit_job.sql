-- submit_job: a submit's writes in ONE statement, under the client's key: the key's
-- record, the money hold and activity stamp, the allowance hold, the job — or nothing
-- at all when the key is taken already (no job comes back; the caller looks the key
-- up). ON CONFLICT DO NOTHING: a failing insert would abort the transaction.
-- unchanged_since_read holds a row while what the decision stood on is still so: the
-- open jobs and the pockets as lock_account_with_extras read them (NULL: read after the
-- lock, nothing to check). fresh says which; 0 means nothing was written and the caller
-- reads again and decides again.
--
-- :account_id         the account
-- :key                the client's idempotency key
-- :request_hash       the hash of the normalised request, for replays
-- :job_id             the new job's id
-- :kind               the job's kind
-- :lane               the lane decided for it
-- :payload            the client's payload, JSON text, or NULL
-- :hold               the hold lines decided, JSON text
-- :money_hold_micros  the money held (0 when none)
-- :pocket             the allowance pocket held, or NULL
-- :pocket_hold        the items held on it (0 when none)
-- :now                the time (database clock, micros): created_at and last_active_at
-- :notice_at          when a job.waiting notice is due if the job is still open
-- :limit_at_submit    the concurrency limit the decision used
-- :open_at_submit     the open jobs with this one
-- :seen_open_jobs     the open jobs the decision stood on, or NULL
-- :seen_pockets       the pockets the decision stood on (JSON text), or NULL
-- :actor              who submitted it (see migration 0007)
-- :currency           the card's currency, which the hold is priced in
WITH unchanged_since_read AS (
    SELECT 1 AS ok
     WHERE (:seen_open_jobs::bigint IS NULL OR
            (SELECT COUNT(*) FROM jobs
              WHERE account_id = :account_id AND status IN ('queued', 'in_progress')) = :seen_open_jobs::bigint)
       AND (:seen_pockets::text IS NULL OR
            (SELECT COALESCE(json_agg(json_build_array(pocket, remaining, held, cycle_started_at) ORDER BY pocket), '[]')::text
               FROM allowances WHERE account_id = :account_id) = :seen_pockets::text)
),
claimed_key AS (
    INSERT INTO idempotency (account_id, key, operation, request_hash, entry_id, job_id, created_at)
    SELECT :account_id, :key, 'submit', :request_hash, NULL, :job_id, :now::bigint
      FROM unchanged_since_read
     -- a key a money change carries is taken too (its entry holds it: migration 0011)
     WHERE NOT EXISTS (SELECT 1 FROM ledger WHERE account_id = :account_id AND idempotency_key = :key)
    ON CONFLICT (account_id, key) DO NOTHING
    RETURNING job_id
),
held_money AS (
    UPDATE accounts
       SET held = held + :money_hold_micros,
           last_active_at = :now
     WHERE account_id = :account_id AND EXISTS (SELECT 1 FROM claimed_key)
),
held_pocket AS (
    UPDATE allowances
       SET held = held + :pocket_hold
     WHERE account_id = :account_id AND pocket = :pocket AND EXISTS (SELECT 1 FROM claimed_key)
),
new_job AS (
    INSERT INTO jobs (job_id, account_id, kind, lane, status, payload, hold, created_at, notice_at,
                      limit_at_submit, open_at_submit, queued_since, submitted_by_actor, currency)
    SELECT :job_id, :account_id, :kind, :lane, 'queued', :payload, :hold, :now::bigint,
           :notice_at::bigint, :limit_at_submit::bigint, :open_at_submit::bigint, :now::bigint, :actor, :currency
      FROM claimed_key
    RETURNING *
)
SELECT (SELECT COUNT(*) FROM unchanged_since_read) AS fresh,
       new_job.*
  FROM (SELECT 1) AS one
  LEFT JOIN new_job ON true
