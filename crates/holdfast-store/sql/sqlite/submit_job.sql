-- submit_job: a submit's writes under the client's key: the key's record, the money
-- hold and activity stamp, the allowance hold, the job — or nothing at all when the
-- key is taken already (no job comes back; the caller looks the key up). Each step runs
-- only when the key's record is this submit's (its new job id). What the decision stood
-- on is current (the write lock is held from BEGIN IMMEDIATE), so nothing is checked.
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
-- :actor              who submitted it (see migration 0007)
-- :currency           the card's currency, which the hold is priced in
INSERT INTO idempotency (account_id, key, operation, request_hash, entry_id, job_id, created_at)
SELECT :account_id, :key, 'submit', :request_hash, NULL, :job_id, :now
 -- a key a money change carries is taken too (its entry holds it: migration 0011)
 WHERE NOT EXISTS (SELECT 1 FROM ledger WHERE account_id = :account_id AND idempotency_key = :key)
    ON CONFLICT (account_id, key) DO NOTHING;

UPDATE accounts
   SET held = held + :money_hold_micros,
       last_active_at = :now
 WHERE account_id = :account_id
   AND EXISTS (SELECT 1 FROM idempotency WHERE account_id = :account_id AND key = :key AND job_id = :job_id);

UPDATE allowances
   SET held = held + :pocket_hold
 WHERE account_id = :account_id AND pocket = :pocket
   AND EXISTS (SELECT 1 FROM idempotency WHERE account_id = :account_id AND key = :key AND job_id = :job_id);

INSERT INTO jobs (job_id, account_id, kind, lane, status, payload, hold, created_at, notice_at,
                  limit_at_submit, open_at_submit, queued_since, submitted_by_actor, currency)
SELECT :job_id, :account_id, :kind, :lane, 'queued', :payload, :hold, :now,
       :notice_at, :limit_at_submit, :open_at_submit, :now, :actor, :currency
 WHERE EXISTS (SELECT 1 FROM idempotency WHERE account_id = :account_id AND key = :key AND job_id = :job_id)
RETURNING *, 1 AS fresh;
