#!/usr/bin/env bash
# API conformance: schemathesis (every check, every phase including the stateful walk
# along the document's links) against a real `holdfast serve` on SQLite and on
# PostgreSQL, then the audit of what it did must be clean. Exits non-zero on any
# failure. Set HOLDFAST_BIN (default target/release/holdfast) and, for PostgreSQL,
# HOLDFAST_TEST_POSTGRES (default postgres://postgres@127.0.0.1:5432; CI=true requires it).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/.." && pwd)
bin=${HOLDFAST_BIN:-$repo/target/release/holdfast}
venv=$repo/target/ci/conformance-venv
pg=${HOLDFAST_TEST_POSTGRES:-postgres://postgres@127.0.0.1:5432}

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

# run NAME DATABASE_URL: one schemathesis run against a fresh server.
run() {
  local name=$1 database=$2 port key
  port=$(free_port)
  key=hf_$(python3 -c 'import secrets; print(secrets.token_hex(32))')
  HOLDFAST_ADMIN_KEY=$key "$bin" serve --listen "127.0.0.1:$port" --database "$database" \
    >"$work/$name-serve.log" 2>&1 &
  server=$!
  for _ in $(seq 1 100); do curl -sf "http://127.0.0.1:$port/healthz" >/dev/null && break; sleep 0.1; done
  echo "== schemathesis on $name (port $port)"
  (cd "$here" && PYTHONPATH="$here" "$venv/bin/schemathesis" --config-file "$here/schemathesis.toml" \
     run "$repo/docs/openapi.json" --url "http://127.0.0.1:$port" \
     -H "Authorization: Bearer $key" --no-color \
     --report junit --report-dir "$repo/target/ci/conformance-$name")
  echo "== audit after $name"
  curl -sf "http://127.0.0.1:$port/v1/admin/audit" -H "Authorization: Bearer $key" \
    | python3 -c 'import json,sys; a=json.load(sys.stdin); print(a); sys.exit(0 if a["ok"] else 1)'
  kill "$server"; wait "$server" 2>/dev/null || true; server=""
}

run sqlite "sqlite://$work/conformance.db"
if psql "$pg/postgres" -qAtc 'select 1' >/dev/null 2>&1; then
  db=conformance_$(python3 -c 'import secrets; print(secrets.token_hex(6))')
  psql "$pg/postgres" -qc "CREATE DATABASE $db"
  trap 'cleanup; psql "$pg/postgres" -qc "DROP DATABASE IF EXISTS $db WITH (FORCE)" >/dev/null' EXIT
  run postgres "$pg/$db"
elif [ "${CI:-}" = "true" ]; then
  echo "conformance: PostgreSQL at $pg is required under CI=true" >&2; exit 1
else
  echo "conformance: WARNING: no PostgreSQL at $pg, its half skipped" >&2
fi
