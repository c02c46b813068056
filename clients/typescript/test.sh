#!/usr/bin/env bash
# The TypeScript client and the CI example, as CI runs them: install (pinned, from the lock
# files), check the generated types against docs/openapi.json, type-check, and run both test
# suites against a real `holdfast serve` ($HOLDFAST_BIN, default target/release/holdfast).
# Set HOLDFAST_TEST_POSTGRES=postgres://… to run them on a fresh PostgreSQL database instead
# of a SQLite file. Exits non-zero on the first failure.
set -euo pipefail

client="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$client/../.." && pwd)"
example="$repo/examples/ci"
export HOLDFAST_BIN="${HOLDFAST_BIN:-$repo/target/release/holdfast}"

step() { printf '\n== %s\n' "$*"; }
started=$SECONDS

if [[ ! -x "$HOLDFAST_BIN" ]]; then
  echo "test.sh: no holdfast binary at $HOLDFAST_BIN (cargo build --release -p holdfast-server, or set HOLDFAST_BIN)" >&2
  exit 1
fi

step "install (npm ci)"
(cd "$client" && npm ci --no-audit --no-fund --loglevel=error)
(cd "$example" && npm ci --no-audit --no-fund --loglevel=error)

step "generated types match docs/openapi.json"
fresh="$(mktemp -d)"
trap 'rm -rf "$fresh"' EXIT
(cd "$client" && npx --no-install openapi-typescript "$repo/docs/openapi.json" --output "$fresh/openapi.ts" >/dev/null)
if ! diff -u "$client/src/generated/openapi.ts" "$fresh/openapi.ts"; then
  echo "test.sh: src/generated/openapi.ts is stale: run 'npm run generate' in clients/typescript and commit it" >&2
  exit 1
fi

step "type-check (tsc --noEmit, strict)"
(cd "$client" && npx --no-install tsc --noEmit -p .)
(cd "$example" && npx --no-install tsc --noEmit -p .)

step "client tests (against $HOLDFAST_BIN)"
(cd "$client" && npm test --silent)

step "CI example, end to end"
(cd "$example" && npm test --silent)

echo
echo "typescript: all passed in $((SECONDS - started)) s"
