#!/usr/bin/env bash
# What CI runs for the Python client: the virtual environment (pinned, under
# $REPO/target/ci), the package installed as users install it, a check that the committed
# generated code is what the generator makes from docs/openapi.json, then the client's
# tests and the bot example end to end, against a real `holdfast serve` ($HOLDFAST_BIN,
# default $REPO/target/release/holdfast; HOLDFAST_TEST_POSTGRES runs them on PostgreSQL).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
export HOLDFAST_BIN=${HOLDFAST_BIN:-$repo/target/release/holdfast}
if [[ ! -x $HOLDFAST_BIN ]]; then
  echo "clients/python/test.sh: no holdfast binary at $HOLDFAST_BIN (build it, or set HOLDFAST_BIN)" >&2
  exit 1
fi

echo "== python client: virtual environment"
venv=$("$here/venv.sh")
python=$venv/bin/python

echo "== python client: pip install ./clients/python"
"$python" -m pip install --quiet --disable-pip-version-check --no-deps --no-build-isolation \
  --force-reinstall "$here"

echo "== python client: generated code matches docs/openapi.json"
scratch=$(mktemp -d "$repo/target/ci/openapi-check.XXXXXX")
trap 'rm -rf "$scratch"' EXIT
"$here/generate.sh" "$scratch/generated"
if ! diff -ru --exclude=__pycache__ "$here/holdfast_client/generated" "$scratch/generated"; then
  echo "clients/python/test.sh: holdfast_client/generated differs from what the generator makes" \
    "from docs/openapi.json (diff above): run clients/python/generate.sh and commit the result" >&2
  exit 1
fi

echo "== python client: ruff (the hand-written code, the tests, the bot example)"
(cd "$here" && "$venv/bin/ruff" check --no-cache --quiet . ../../examples/bot \
  && "$venv/bin/ruff" format --no-cache --check --quiet . ../../examples/bot)

echo "== python client: tests and the bot example against $HOLDFAST_BIN"
cd "$repo"
"$python" -m pytest -q -p no:cacheprovider clients/python/tests examples/bot
