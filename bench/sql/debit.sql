-- The `debit` floor of holdfast-bench (crates/holdfast-bench/src/floor.rs,
-- FloorPool::debit) for pgbench: a metered debit of 100 micros on a random account,
-- as the guarded UPDATE … RETURNING, the ledger entry and the idempotency record in
-- one transaction. Run with -M prepared (sqlx prepares its statements too).
-- Variables (pgbench -D): accounts = how many accounts b0…b{accounts-1} there are
-- (1 for the `debit-hot` floor: every client debits b0);
-- now = the entries' created_at, micros since the epoch (the floor binds its clock).
-- The idempotency key is random over 9e18 values (no counter in pgbench).
\set aid random(0, :accounts - 1)
\set key random(1, 9000000000000000000)
BEGIN;
UPDATE accounts SET balance = balance - 100, total_spent = total_spent + 100
 WHERE account_id = 'b' || :aid AND balance - held - 100 >= -1000000
RETURNING balance, held \gset
\set available :balance - :held
INSERT INTO ledger (account_id, pocket, delta, kind, amount_after, available_after, buffer, ref, created_at)
VALUES ('b' || :aid, 'money', -100, 'debit', :balance, :available, 1000000, NULL, :now)
RETURNING entry_id \gset
INSERT INTO idempotency (account_id, key, operation, request_hash, entry_id, job_id, created_at)
VALUES ('b' || :aid, 'pgbench-' || :key, 'debit',
        '0000000000000000000000000000000000000000000000000000000000000000', :entry_id, NULL, :now);
COMMIT;
