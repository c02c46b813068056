-- finish_job: a job ends: its account row (money hold released, capture taken,
-- suspension), its allowance pocket (hold released, capture taken), the capture's
-- ledger entry (when something was taken), the job row and its end event. Returns the
-- job as written, with the entry's id.
--
-- :account_id               the job's account
-- :balance_delta_micros     minus the money captured (0 when none)
-- :money_held_delta_micros  minus the money hold released (0 when none)
-- :spent_micros             how much total_spent grows (the money captured)
-- :suspended_at             the account's suspended_at after the capture
-- :pocket                   the allowance pocket the hold is on, or NULL
-- :pocket_held_delta        minus the allowance hold released
-- :pocket_remaining_delta   minus the actual decrease of the pocket (floored at 0)
-- :entry_pocket             the capture entry's pocket, or NULL for no entry
-- :entry_delta              the capture entry's delta (0: no entry)
-- :entry_amount_after       the pocket's amount after the capture
-- :entry_available_after    amount after minus held
-- :entry_buffer_micros      the money buffer on the entry, or NULL
-- :job_id                   the job (also the capture entry's reference)
-- :now                      the time (database clock, micros)
-- :status                   the final status: succeeded, failed, canceled, expired
-- :charged                  what was charged, JSON lines
-- :finished_by              complete, fail, cancel or sweep
-- :failure_reason           a worker's reason for a failure, or NULL
-- :event_type               the job's end event, e.g. job.succeeded
-- :event_data               the event's data, JSON text
-- :actor                    who ended it (see migration 0007)
UPDATE accounts
   SET balance = balance + :balance_delta_micros,
       held = held + :money_held_delta_micros,
       total_spent = total_spent + :spent_micros,
       suspended_at = :suspended_at
 WHERE account_id = :account_id
   AND (:balance_delta_micros <> 0 OR :money_held_delta_micros <> 0);

UPDATE allowances
   SET held = held + :pocket_held_delta,
       remaining = remaining + :pocket_remaining_delta
 WHERE account_id = :account_id AND pocket = :pocket;

INSERT INTO ledger (account_id, pocket, delta, kind, amount_after, available_after, buffer, ref, created_at, actor)
SELECT :account_id, :entry_pocket, :entry_delta, 'capture', :entry_amount_after,
       :entry_available_after, :entry_buffer_micros, :job_id, :now, :actor
 WHERE :entry_delta <> 0;

UPDATE jobs
   SET status = :status,
       charged = :charged,
       finished_at = :now,
       finished_by = :finished_by,
       failure_reason = :failure_reason,
       finished_by_actor = :actor,
       lease_token = CASE WHEN :finished_by = 'sweep' THEN NULL ELSE lease_token END
 WHERE job_id = :job_id
RETURNING *, CASE WHEN :entry_delta <> 0 THEN last_insert_rowid() END AS entry_id;

INSERT INTO events (type, account_id, job_id, data, created_at, actor)
VALUES (:event_type, :account_id, :job_id, :event_data, :now, :actor);
