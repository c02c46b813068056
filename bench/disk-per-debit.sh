#!/usr/bin/env bash
# Bytes on disk per debit on PostgreSQL: DEBITS debits (default 5,000,000) over ACCOUNTS
# accounts (default 100,000), in random order, through `holdfast ingest` (batches of
# 500) into a fresh database; then the growth of the ledger and idempotency tables (heap,
# TOAST and every index) divided by the debits, and each index's share. Keys are shaped
# as holdfast-bench's (`run-n`, 10 to 16 characters). Setup (the accounts, each with a
# top-up entry) is measured before and subtracted. The database is dropped afterwards.
#   cargo build --release -p holdfast-server && bench/disk-per-debit.sh
set -euo pipefail
BIN=${BIN:-target/release/holdfast}
DEBITS=${DEBITS:-5000000}
ACCOUNTS=${ACCOUNTS:-100000}
PG=${PG:-postgres://postgres@127.0.0.1:5432}
DB=holdfast_disk_$$
WORK=$(mktemp -d)
psql -q "$PG/postgres" -c "CREATE DATABASE $DB"
trap 'psql -q "$PG/postgres" -c "DROP DATABASE IF EXISTS $DB WITH (FORCE)"; rm -rf "$WORK"' EXIT
export HOLDFAST_DATABASE_URL=$PG/$DB
"$BIN" migrate >/dev/null
psql -q "$HOLDFAST_DATABASE_URL" <<SQL
INSERT INTO accounts (account_id, plan, balance, held, total_credited, total_spent, created_at)
SELECT 'a' || g, 'free', 1000000000000, 0, 1000000000000, 0, 0 FROM generate_series(1, $ACCOUNTS) g;
INSERT INTO ledger (account_id, pocket, delta, kind, amount_after, available_after, buffer, ref,
                    created_at, actor, idempotency_key, request_hash)
SELECT 'a' || g, 'money', 1000000000000, 'top_up', 1000000000000, 1000000000000, 1000000, NULL, 0,
       'setup', 'setup-' || g, '0000000000000000' FROM generate_series(1, $ACCOUNTS) g;
VACUUM ANALYZE;
SQL
sizes() {
  psql -qAt "$HOLDFAST_DATABASE_URL" -c "
    SELECT relname || ' ' || pg_total_relation_size(oid) FROM pg_class
     WHERE relname IN ('ledger', 'idempotency')
    UNION ALL
    SELECT indexrelname || ' ' || pg_relation_size(indexrelid) FROM pg_stat_user_indexes
     WHERE relname IN ('ledger', 'idempotency')
    UNION ALL
    SELECT 'ledger_heap ' || pg_relation_size('ledger')" | sort
}
sizes >"$WORK/before"
python3 - "$DEBITS" "$ACCOUNTS" >"$WORK/debits.jsonl" <<'PY'
import random, sys, uuid
n, accounts = int(sys.argv[1]), int(sys.argv[2])
run = uuid.uuid4().hex[:8]
rnd = random.Random(43)
out = sys.stdout
for i in range(n):
    out.write('{"account_id": "a%d", "amount": "0.0001", "idempotency_key": "%s-%d"}\n'
              % (rnd.randint(1, accounts), run, i))
PY
start=$(date +%s%N)
"$BIN" ingest "$WORK/debits.jsonl" --batch 500 >/dev/null 2>"$WORK/ingest.log"
end=$(date +%s%N)
sizes >"$WORK/after"
python3 - "$WORK/before" "$WORK/after" "$DEBITS" "$start" "$end" <<'PY'
import sys
before, after = ({l.split()[0]: int(l.split()[1]) for l in open(f)} for f in sys.argv[1:3])
n, seconds = int(sys.argv[3]), (int(sys.argv[5]) - int(sys.argv[4])) / 1e9
print(f"ingested {n} debits in {seconds:.0f} s ({n / seconds:,.0f} debits/s, one holdfast ingest)")
for name in sorted(after):
    grown = after[name] - before.get(name, 0)
    print(f"{name:<22} {grown:>13,} bytes {grown / n:>8.1f} bytes/debit")
PY
"$BIN" audit >/dev/null && echo "audit: clean"
