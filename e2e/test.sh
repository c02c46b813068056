#!/usr/bin/env bash
# The operator console in a real browser: headless Chromium (Debian's package, at
# $CHROMIUM or /usr/bin/chromium) driven by Playwright, against a real `holdfast serve`
# ($HOLDFAST_BIN) on SQLite and, when HOLDFAST_TEST_POSTGRES is set (CI sets it), on
# PostgreSQL. Screenshots of every page go to target/ci/e2e-screenshots/<backend>/.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/.." && pwd)
export HOLDFAST_BIN=${HOLDFAST_BIN:-$repo/target/release/holdfast}
export CHROMIUM=${CHROMIUM:-/usr/bin/chromium}
if [[ ! -x $HOLDFAST_BIN ]]; then
  echo "e2e/test.sh: no holdfast binary at $HOLDFAST_BIN (build it, or set HOLDFAST_BIN)" >&2
  exit 1
fi
if [[ ! -x $CHROMIUM ]]; then
  echo "e2e/test.sh: no Chromium at $CHROMIUM (apt-get install chromium; .ci/run does)" >&2
  exit 1
fi
venv=${HOLDFAST_E2E_VENV:-$repo/target/ci/e2e-venv}
stamp=$venv/.requirements.sha256
wanted=$(sha256sum "$here/requirements.txt" | cut -d' ' -f1)
if [[ ! -x $venv/bin/python ]]; then
  mkdir -p "$(dirname "$venv")"
  python3 -m venv "$venv"
fi
if [[ ! -f $stamp || $(cat "$stamp") != "$wanted" ]]; then
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check \
    --requirement "$here/requirements.txt"
  echo "$wanted" >"$stamp"
fi
# PostgreSQL too when it answers (CI makes sure it does).
if [[ -z ${HOLDFAST_TEST_POSTGRES:-} ]] && pg_isready -h 127.0.0.1 -p 5432 -q 2>/dev/null; then
  export HOLDFAST_TEST_POSTGRES=postgres://postgres@127.0.0.1:5432
fi
if [[ ${CI:-} == true && -z ${HOLDFAST_TEST_POSTGRES:-} ]]; then
  echo "e2e/test.sh: PostgreSQL is required under CI (HOLDFAST_TEST_POSTGRES or 127.0.0.1:5432)" >&2
  exit 1
fi
export HOLDFAST_E2E_SCREENSHOTS=${HOLDFAST_E2E_SCREENSHOTS:-$repo/target/ci/e2e-screenshots}
cd "$repo"
"$venv/bin/python" -m pytest -q -p no:cacheprovider "$here"
