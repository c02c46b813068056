#!/usr/bin/env bash
# Checks holdfast-bench's floors with a tool that is not ours: creates a fresh database,
# migrates it with `holdfast migrate`, seeds the accounts as the bench does
# (`holdfast-bench seed`), then for each floor and round runs pgbench on the floor's
# script (bench/sql/FLOOR.sql; debit-hot: debit.sql with accounts=1) and holdfast-bench on the same workload, alternating which
# goes first, and prints both rates and CPU per operation. Drops the database at the end.
#
# Settings (environment):
#   CLIENTS=16  SECONDS_PER_SIDE=10  ROUNDS=3  ACCOUNTS=1000  BATCH=100
#   FLOORS="debit debit-hot lifecycle ingest"
#   BIN=target/release       (holds `holdfast` and `holdfast-bench`; build them with
#                             cargo build --release -p holdfast-server -p holdfast-bench)
#   HOLDFAST_BIN=$BIN/holdfast   (the `holdfast` CLI that migrates)
#   ADMIN_URL=postgres://postgres@127.0.0.1:5432/postgres   (or HOLDFAST_TEST_POSTGRES)
#   BENCH_ARGS=""            (more holdfast-bench flags, e.g. "--warmup 0")
# pgbench runs with -M prepared, -j 2, -n; each holdfast-bench run is one slice per side
# (--rounds 1) of SECONDS_PER_SIDE, after its own warm-up.
#
# CPU per operation of a pgbench run: pgbench's own user+sys (bash `times` of the child)
# and the PostgreSQL server's (the postmaster with its reaped children, plus its live
# children, from /proc/PID/stat, as holdfast-bench counts it), divided by the
# transactions pgbench processed. Both count every database of the server: run it when
# nothing else uses the server.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
CLIENTS=${CLIENTS:-16}
SECONDS_PER_SIDE=${SECONDS_PER_SIDE:-10}
ROUNDS=${ROUNDS:-3}
ACCOUNTS=${ACCOUNTS:-1000}
BATCH=${BATCH:-100}
FLOORS=${FLOORS:-"debit debit-hot lifecycle ingest"}
BIN=${BIN:-"${CARGO_TARGET_DIR:-$root/target}/release"}
ADMIN_URL=${ADMIN_URL:-${HOLDFAST_TEST_POSTGRES:-postgres://postgres@127.0.0.1:5432/postgres}}
BENCH_ARGS=${BENCH_ARGS:-}
HOLDFAST_BIN=${HOLDFAST_BIN:-"$BIN/holdfast"}
TICKS=$(getconf CLK_TCK)

for tool in pgbench psql awk; do
  command -v "$tool" >/dev/null || { echo "pgbench.sh: $tool not found" >&2; exit 2; }
done
for exe in "$HOLDFAST_BIN" "$BIN/holdfast-bench"; do
  [ -x "$exe" ] || { echo "pgbench.sh: $exe not built" >&2; exit 2; }
done
case "$ADMIN_URL" in
  postgres://*@127.0.0.1[:/]* | postgresql://*@127.0.0.1[:/]* | postgres://*@localhost[:/]*) ;;
  *) echo "pgbench.sh: PostgreSQL must be on 127.0.0.1, not $ADMIN_URL" >&2; exit 2 ;;
esac

db="holdfast_pgbench_$(date +%s)_$$"
url="${ADMIN_URL%/*}/$db"
drop() { psql -q "$ADMIN_URL" -c "DROP DATABASE IF EXISTS $db WITH (FORCE)" >/dev/null || true; }
trap drop EXIT
psql -q "$ADMIN_URL" -c "CREATE DATABASE $db"
"$HOLDFAST_BIN" migrate --database "$url"
"$BIN/holdfast-bench" seed --database "$url" --accounts "$ACCOUNTS" | grep seeded

# The postmaster: the first line of postmaster.pid in the server's data directory.
datadir=$(psql -At "$url" -c "SHOW data_directory")
postmaster=$(head -1 "$datadir/postmaster.pid" 2>/dev/null || true)
if [ -z "$postmaster" ] || ! grep -q '^[0-9]* (postgres) ' "/proc/$postmaster/stat" 2>/dev/null; then
  echo "pgbench.sh: cannot read the postmaster's pid from $datadir/postmaster.pid" >&2
  exit 2
fi

# Clock ticks of the server: the postmaster's own and its reaped children's, then each
# live child's (fields after the name: 2 ppid, 12 utime, 13 stime, 14 cutime, 15 cstime).
# Pure bash: a process that exits while it is read is skipped, never an error.
server_ticks() {
  local f line pid ticks=0
  for f in /proc/[0-9]*/stat; do
    { read -r line <"$f"; } 2>/dev/null || continue
    pid=${line%% *}
    # shellcheck disable=SC2086 # split the fields after the name on purpose
    set -- ${line##*) }
    if [ "$pid" = "$postmaster" ]; then
      ticks=$((ticks + ${12} + ${13} + ${14} + ${15}))
    elif [ "$2" = "$postmaster" ]; then
      ticks=$((ticks + ${12} + ${13}))
    fi
  done
  echo "$ticks"
}

# One pgbench side: rate and CPU per transaction. `debit-hot` is debit.sql on one
# account (b0): the hot floor's statements are the debit floor's.
run_pgbench() {
  local floor=$1 script=$1 accounts=$ACCOUNTS out now before after t0 t1
  if [ "$floor" = debit-hot ]; then script=debit accounts=1; fi
  out=$(mktemp)
  now=$(date +%s%6N)
  before=$(server_ticks)
  # `times` in this shell (no subshell): its second line is the CPU of the children
  # it waited for, so the difference around pgbench is pgbench's user and sys time.
  times >"$out.t0"
  pgbench -n -M prepared -c "$CLIENTS" -j 2 -T "$SECONDS_PER_SIDE" \
    -D accounts="$accounts" -D batch="$BATCH" -D now="$now" \
    -f "$here/sql/$script.sql" "$url" >"$out" 2>&1 || { cat "$out" >&2; rm -f "$out"*; return 1; }
  times >"$out.t1"
  sleep 0.2 # the backends' exits reaped, so their time is in the postmaster's
  after=$(server_ticks)
  t0=$(tail -1 "$out.t0")
  t1=$(tail -1 "$out.t1")
  awk -v t0="$t0" -v t1="$t1" -v s0="$before" -v s1="$after" -v hz="$TICKS" \
      -v floor="$floor" -v secs="$SECONDS_PER_SIDE" '
    function secs_of(s,   m, parts) { # "0m1.230s 0m0.120s" -> user + sys seconds
      split(s, parts, " "); m = 0
      for (i = 1; i <= 2; i++) { split(parts[i], x, "m"); sub(/s$/, "", x[2]); m += x[1] * 60 + x[2] }
      return m
    }
    /number of transactions actually processed/ { ops = $NF; sub(/\/.*/, "", ops) }
    /^tps = / { tps = $3 }
    /number of failed transactions/ { failed = $5 }
    END {
      cli = (secs_of(t1) - secs_of(t0)) * 1e6 / (ops > 0 ? ops : 1)
      db = (s1 - s0) / hz * 1e6 / (ops > 0 ? ops : 1)
      cores = ((secs_of(t1) - secs_of(t0)) + (s1 - s0) / hz) / secs
      printf "pgbench %-10s %10.0f /s  %s ops  failed %s  cpu per op: client %.0f µs, db %.0f µs, total %.0f µs  cores %.2f\n",
        floor, tps, ops, failed + 0, cli, db, cli + db, cores
    }' "$out"
  grep -i 'error\|abort' "$out" | head -3 >&2 || true
  rm -f "$out" "$out.t0" "$out.t1"
}

run_bench() {
  local floor=$1
  # shellcheck disable=SC2086 # BENCH_ARGS is a list of flags
  "$BIN/holdfast-bench" "$floor" --database "$url" --clients "$CLIENTS" \
    --seconds "$SECONDS_PER_SIDE" --rounds 1 --accounts "$ACCOUNTS" \
    --ingest-accounts "$ACCOUNTS" --ingest-batch "$BATCH" $BENCH_ARGS |
    grep -v '^$' | grep -v '^nproc\|^cpu_cli'
}

echo "database $db, $CLIENTS clients, $SECONDS_PER_SIDE s per side, $ROUNDS rounds, $ACCOUNTS accounts, load $(cut -d' ' -f1-3 /proc/loadavg)"
for round in $(seq 1 "$ROUNDS"); do
  for floor in $FLOORS; do
    echo "-- round $round: $floor"
    if [ $((round % 2)) -eq 1 ]; then
      run_pgbench "$floor"
      run_bench "$floor"
    else
      run_bench "$floor"
      run_pgbench "$floor"
    fi
  done
done
echo "load $(cut -d' ' -f1-3 /proc/loadavg)"
