#!/usr/bin/env bash
# Creates or updates the Python virtual environment of clients/python from requirements.txt
# and prints its path. It lives under the build directory ($REPO/target/ci, git-ignored);
# HOLDFAST_PYTHON_VENV overrides the place. pip runs only when requirements.txt changed.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
venv=${HOLDFAST_PYTHON_VENV:-$repo/target/ci/python-venv}
stamp=$venv/.requirements.sha256
wanted=$(sha256sum "$here/requirements.txt" | cut -d' ' -f1)

if [[ ! -x $venv/bin/python ]]; then
  mkdir -p "$(dirname "$venv")"
  python3 -m venv "$venv" >&2
fi
if [[ ! -f $stamp || $(cat "$stamp") != "$wanted" ]]; then
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check \
    --requirement "$here/requirements.txt" >&2
  echo "$wanted" >"$stamp"
fi
echo "$venv"
