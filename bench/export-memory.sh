#!/usr/bin/env bash
# Peak memory of exporting a big ledger, on SQLite and PostgreSQL:
#  - `holdfast export` (the CLI, CSV to a file): the process's maximum resident set;
#  - `GET /v1/ledger` with `Accept: text/csv` (the serve process): its VmHWM before and
#    after streaming the whole range to curl.
# The ledger is filled with ENTRIES synthetic debit rows straight in SQL (the export reads
# rows; it does not care how they were written).
#
# Usage: cargo build --release -p holdfast-server && bench/export-memory.sh [ENTRIES]
# Needs sqlite3, psql and curl; PostgreSQL at 127.0.0.1:5432 (user postgres, trust).
set -euo pipefail
N=${1:-1000000}
BIN=${HOLDFAST_BIN:-target/release/holdfast}
PG=${PG_ADMIN_URL:-postgres://postgres@127.0.0.1:5432}
dir=$(mktemp -d)
db="holdfast_export_mem_$$"
cleanup() {
  rm -rf "$dir"
  psql -q "$PG/postgres" -c "DROP DATABASE IF EXISTS $db" >/dev/null 2>&1 || true
}
trap cleanup EXIT
export HOLDFAST_ADMIN_KEY=hf_export_memory_bench_key_0123456789abcdef

fill_sql() { # $1: the row source for 1..N as "i"
  cat <<SQL
INSERT INTO ledger (account_id, pocket, delta, kind, amount_after, available_after, buffer, ref, created_at)
SELECT 'acct-' || (i % 1000), 'money', -10000, 'debit', -10000 * i, -10000 * i, 1000000,
       'run-' || i, 1764547200000000 + i * 1000
  FROM $1;
SQL
}

measure() { # $1: backend name, $2: database URL
  local url=$2
  local cli_kb cli_s rows
  read -r cli_kb cli_s < <( { /usr/bin/time -f '%M %e' "$BIN" export --database "$url" --output "$dir/out.csv" >/dev/null; } 2>&1 | tail -1)
  rows=$(($(wc -l < "$dir/out.csv") - 1))
  local port=$((20000 + RANDOM % 20000))
  "$BIN" serve --database "$url" --listen "127.0.0.1:$port" >"$dir/serve.log" 2>&1 &
  local pid=$!
  for _ in $(seq 100); do curl -sf "http://127.0.0.1:$port/healthz" >/dev/null && break; sleep 0.1; done
  local before after
  before=$(awk '/VmHWM/ {print $2}' "/proc/$pid/status")
  curl -sf -H "Authorization: Bearer $HOLDFAST_ADMIN_KEY" -H 'Accept: text/csv' \
    "http://127.0.0.1:$port/v1/ledger" -o "$dir/http.csv"
  after=$(awk '/VmHWM/ {print $2}' "/proc/$pid/status")
  kill "$pid"; wait "$pid" 2>/dev/null || true
  local http_rows=$(($(wc -l < "$dir/http.csv") - 1))
  printf '%-9s entries %8d  cli max RSS %6d KiB in %5.1f s  |  serve VmHWM %6d KiB before, %6d KiB after (%d rows streamed)\n' \
    "$1" "$rows" "$cli_kb" "$cli_s" "$before" "$after" "$http_rows"
}

# SQLite
"$BIN" migrate --database "sqlite://$dir/b.db" >/dev/null
fill_sql "(WITH RECURSIVE seq(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM seq WHERE i < $N) SELECT i FROM seq)" \
  | sqlite3 "$dir/b.db"
measure sqlite "sqlite://$dir/b.db"

# PostgreSQL
psql -q "$PG/postgres" -c "CREATE DATABASE $db" >/dev/null
"$BIN" migrate --database "$PG/$db" >/dev/null
fill_sql "generate_series(1::bigint, $N) AS i" | psql -v ON_ERROR_STOP=1 -q "$PG/$db" >/dev/null
psql -q "$PG/$db" -c "ANALYZE ledger" >/dev/null
measure postgres "$PG/$db"
