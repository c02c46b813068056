#!/usr/bin/env bash
# API conformance: schemathesis (every check, every phase including the stateful walk
# along the document's links) against a real `holdfast serve` on SQLite and on
# PostgreSQL, testing the document that server serves (GET /openapi.json: the committed
# docs/openapi.json plus the rate card's names and longest lease), then the audit of what
# it did must be clean. Each backend runs with the fixed seed of schemathesis.toml (the
# same cases every run), then once more with a fresh random seed (other cases every run;
# printed, and CONFORMANCE_SEED=N repeats it) in the phases a seed changes: fuzzing and
# the stateful walk (the coverage phase's boundary values do not depend on it). Exits
# non-zero on any failure. Set HOLDFAST_BIN (default target/release/holdfast) and, for
# PostgreSQL, HOLDFAST_TEST_POSTGRES (default postgres://postgres@127.0.0.1:5432; CI=true
# requires it). On a quiet 2-core machine with the debug binary the whole run took 212 s
# (the fixed seed 80-90 s per backend, the random one 15-20 s).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/.." && pwd)
bin=${HOLDFAST_BIN:-$repo/target/release/holdfast}
venv=$repo/target/ci/conformance-venv
pg=${HOLDFAST_TEST_POSTGRES:-postgres://postgres@127.0.0.1:5432}
fixed_seed=$(sed -n 's/^seed = \([0-9]*\)$/\1/p' "$here/schemathesis.toml")
random_seed=${CONFORMANCE_SEED:-$(python3 -c 'import secrets; print(secrets.randbelow(2**31))')}

if [ ! -x "$venv/bin/schemathesis" ] || ! cmp -s "$here/requirements.txt" "$venv/requirements.txt"; then
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet --disable-pip-version-check -r "$here/requirements.txt"
  cp "$here/requirements.txt" "$venv/requirements.txt"
fi

work=$(mktemp -d)
server=""
cleanup() { [ -n "$server" ] && kill "$server" 2>/dev/null; wait 2>/dev/null || true; rm -rf "$work"; }
trap cleanup EXIT

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

# run NAME DATABASE_URL SEED [PHASES]: one schemathesis run against a fresh server.
run() {
  local name=$1 database=$2 seed=$3 phases=${4:-examples,coverage,fuzzing,stateful} port key doc
  port=$(free_port)
  key=hf_$(python3 -c 'import secrets; print(secrets.token_hex(32))')
  HOLDFAST_ADMIN_KEY=$key "$bin" serve --listen "127.0.0.1:$port" --database "$database" \
    >"$work/$name-serve.log" 2>&1 &
  server=$!
  for _ in $(seq 1 100); do curl -sf "http://127.0.0.1:$port/healthz" >/dev/null && break; sleep 0.1; done
  # The document this server serves, kept beside the report (loaded from a file, not the
  # URL: schemathesis leaves the operation that serves the loaded document untested).
  mkdir -p "$repo/target/ci/conformance-$name-$seed"
  doc=$repo/target/ci/conformance-$name-$seed/openapi.json
  curl -sf "http://127.0.0.1:$port/openapi.json" >"$doc"
  echo "== schemathesis on $name, seed $seed, phases $phases (port $port)"
  (cd "$here" && PYTHONPATH="$here" "$venv/bin/schemathesis" --config-file "$here/schemathesis.toml" \
     run "$doc" --url "http://127.0.0.1:$port" \
     --seed "$seed" --phases "$phases" \
     -H "Authorization: Bearer $key" --no-color \
     --report junit --report-dir "$repo/target/ci/conformance-$name-$seed")
  echo "== audit after $name"
  curl -sf "http://127.0.0.1:$port/v1/admin/audit" -H "Authorization: Bearer $key" \
    | python3 -c 'import json,sys; a=json.load(sys.stdin); print(a); sys.exit(0 if a["ok"] else 1)'
  kill "$server"; wait "$server" 2>/dev/null || true; server=""
}

# run_both NAME DATABASE_URL: the fixed seed, then the random one on a fresh database.
run_both() {
  run "$1" "$2" "$fixed_seed"
  run "$1" "${2}_random" "$random_seed" fuzzing,stateful
}

echo "conformance: fixed seed $fixed_seed, random seed $random_seed (to repeat a failure of the random seed: CONFORMANCE_SEED=$random_seed $0)"
run_both sqlite "sqlite://$work/conformance.db"
if psql "$pg/postgres" -qAtc 'select 1' >/dev/null 2>&1; then
  db=conformance_$(python3 -c 'import secrets; print(secrets.token_hex(6))')
  psql "$pg/postgres" -qc "CREATE DATABASE $db" -c "CREATE DATABASE ${db}_random"
  trap 'cleanup; for d in $db ${db}_random; do psql "$pg/postgres" -qc "DROP DATABASE IF EXISTS $d WITH (FORCE)" >/dev/null; done' EXIT
  run_both postgres "$pg/$db"
elif [ "${CI:-}" = "true" ]; then
  echo "conformance: PostgreSQL at $pg is required under CI=true" >&2; exit 1
else
  echo "conformance: WARNING: no PostgreSQL at $pg, its half skipped" >&2
fi
