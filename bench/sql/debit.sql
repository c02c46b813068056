-- The `debit` floor of holdfast-bench (crates/holdfast-bench/src/floor.rs,
-- FloorPool::debit) for pgbench: a metered debit of 100 micros on a random account,
-- as the guarded UPDATE … RETURNING and the ledger entry carrying the key (one row) in
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
INSERT INTO ledger (account_id, pocket, delta, kind, amount_after, available_after, buffer, ref, created_at,
                    idempotency_key, request_hash, meter, seconds)
VALUES ('b' || :aid, 'money', -100, 'debit', :balance, :available, 1000000, NULL, :now,
        'pgbench-' || :key, '0000000000000000', 'linux-small', 1);
COMMIT;
