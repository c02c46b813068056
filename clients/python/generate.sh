#!/usr/bin/env bash
# Regenerates holdfast_client/generated from docs/openapi.json with the pinned
# openapi-python-client (generator-config.yaml). With an argument, writes the generated
# package to that directory instead (test.sh uses it to check for drift).
# Never edit the generated tree by hand: hand-written code lives beside it.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
venv=$("$here/venv.sh")
target=${1:-$here/holdfast_client/generated}

# OpenAPI requires operationIds to be unique; with a repeated one the generator silently
# keeps only one of the operations (one module per operationId).
"$venv/bin/python" - "$repo/docs/openapi.json" <<'PY'
import collections, json, sys

paths = json.load(open(sys.argv[1]))["paths"]
ids = collections.Counter(
    op["operationId"] for item in paths.values() for op in item.values()
    if isinstance(op, dict) and "operationId" in op
)
repeated = sorted(name for name, count in ids.items() if count > 1)
if repeated:
    sys.exit(f"generate.sh: docs/openapi.json gives more than one operation the operationId "
             f"{', '.join(repeated)}; they must be unique (the generator would keep only one)")
PY

# Generate in a scratch directory first, so the output never depends on where it lands.
scratch=$(mktemp -d "$repo/target/ci/openapi-gen.XXXXXX")
trap 'rm -rf "$scratch"' EXIT
(
  cd "$scratch"
  PATH=$venv/bin:$PATH openapi-python-client generate \
    --path "$repo/docs/openapi.json" --meta none \
    --config "$here/generator-config.yaml" --output-path "$scratch/generated" \
    --fail-on-warning >"$scratch/log" 2>&1 || { cat "$scratch/log" >&2; exit 1; }
)
rm -rf "$target"
mkdir -p "$(dirname "$target")"
mv "$scratch/generated" "$target"
