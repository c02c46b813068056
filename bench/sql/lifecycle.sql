-- The `lifecycle` floor of holdfast-bench (crates/holdfast-bench/src/floor.rs,
-- FloorPool::submit, lease, complete) for pgbench: submit a `video` job (holds 500000
-- micros) on a random account, lease the oldest queued `video` job, complete it
-- (capture the hold): three transactions per pgbench transaction. Run with -M prepared.
-- Variables (pgbench -D): accounts = how many accounts b0…b{accounts-1} there are;
-- now = created_at / finished_at, micros since the epoch.
-- One difference from floor.rs: the lease statement is wrapped in a CTE with a count, so
-- that a lease that finds nothing (every queued job row locked by another client) gives
-- one row with got = 0 instead of none (pgbench's \gset needs exactly one row); the
-- complete is then skipped, as the bench's lifecycle retries its lease.
\set aid random(0, :accounts - 1)
\set key random(1, 9000000000000000000)
\set notice :now + 5000000
BEGIN;
UPDATE accounts SET held = held + 500000, last_active_at = :now
 WHERE account_id = 'b' || :aid AND balance - held >= 500000
   AND suspended_at IS NULL AND blocked_at IS NULL
RETURNING held \gset
INSERT INTO jobs (job_id, account_id, kind, lane, status, payload, hold, created_at, notice_at,
                  limit_at_submit, open_at_submit)
VALUES ('pgbench-' || :key, 'b' || :aid, 'video', 'video', 'queued', NULL,
        '[{"pocket":"money","amount":500000}]', :now, :notice, 1000000, 1);
INSERT INTO idempotency (account_id, key, operation, request_hash, entry_id, job_id, created_at)
VALUES ('b' || :aid, 'pgbench-' || :key, 'submit',
        '0000000000000000', NULL,
        'pgbench-' || :key, :now);
COMMIT;
BEGIN;
WITH leased AS (
  UPDATE jobs SET status = 'in_progress', lease_token = 'lease-' || :key, lease_seconds = 60,
         worker_id = 'w' || :client_id,
         started_at = COALESCE(started_at, (extract(epoch from clock_timestamp()) * 1000000)::bigint),
         lease_expires_at = (extract(epoch from clock_timestamp()) * 1000000)::bigint + 60 * 1000000
   WHERE status = 'queued' AND job_id = (
         SELECT j.job_id FROM jobs j JOIN accounts a ON a.account_id = j.account_id
          WHERE j.lane = 'video' AND j.status = 'queued'
            AND a.suspended_at IS NULL AND a.blocked_at IS NULL
          ORDER BY j.created_at, j.job_id LIMIT 1 FOR UPDATE OF j SKIP LOCKED)
  RETURNING job_id, account_id)
SELECT count(*) AS got, max(job_id) AS leased_job, max(account_id) AS leased_account
  FROM leased \gset
COMMIT;
\if :got
BEGIN;
UPDATE jobs SET status = 'succeeded', charged = hold, finished_at = :now, finished_by = 'complete'
 WHERE job_id = :leased_job AND lease_token = 'lease-' || :key AND status = 'in_progress'
RETURNING job_id AS finished_job \gset
UPDATE accounts SET balance = balance - 500000, held = held - 500000, total_spent = total_spent + 500000
 WHERE account_id = :leased_account
RETURNING balance, held \gset
\set available :balance - :held
INSERT INTO ledger (account_id, pocket, delta, kind, amount_after, available_after, buffer, ref, created_at)
VALUES (:leased_account, 'money', -500000, 'capture', :balance, :available, 1000000, :leased_job, :now);
INSERT INTO events (type, account_id, job_id, data, created_at)
VALUES ('job.succeeded', :leased_account, :leased_job,
        '{"kind":"video","lane":"video","status":"succeeded"}', :now);
COMMIT;
\endif
