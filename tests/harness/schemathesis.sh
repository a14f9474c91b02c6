#!/usr/bin/env bash
# Schemathesis against the built gateway: every operation of src/api/openapi.json with all checks,
# schema-valid and schema-violating data, and the stateful phase (the document's links lead from
# each create operation to its item routes). Exits non-zero on any failure.
#
#   tests/harness/schemathesis.sh [schemathesis run options, e.g. --max-examples 30]
#
# The gateway runs on workerd through tests/harness/serve.mjs (local D1 and Durable Objects in a
# fresh state directory under target/, a free port) with the production [vars] and a fixed admin
# key. Caller routes are called with the admin key, which is no caller key: they answer 401, as
# the document says. tests/harness/schemathesis.toml lists the operations whose 400 can depend on
# more than the schema states.
set -euo pipefail
cd "$(dirname "$0")/../.."

[[ -f build/index.js ]] || { echo "schemathesis.sh: build/index.js is missing (make build)" >&2; exit 2; }
ADMIN=schemathesis-admin-key
KEK=$(printf '5a%.0s' $(seq 1 32))
mkdir -p target
state=$(mktemp -d target/schemathesis.XXXXXX)

# The launcher serves until its stdin closes: a coprocess whose stdin this script holds, closed
# (and the launcher waited for) on exit.
coproc SERVE { exec node tests/harness/serve.mjs --state "$state" \
  --var "CG_ADMIN=$ADMIN" --var "CG_KEK=$KEK" 2>"$state/worker.log"; }
serve_pid=$SERVE_PID
trap 'exec {SERVE[1]}>&-; wait "$serve_pid" 2>/dev/null || true' EXIT
if ! read -r -t 60 ready <&"${SERVE[0]}"; then
  echo "schemathesis.sh: the gateway did not start" >&2
  cat "$state/worker.log" >&2
  exit 1
fi
url=$(node -e 'console.log(JSON.parse(process.argv[1]).url.replace(/\/$/, ""))' "$ready")
echo "schemathesis.sh: gateway on $url (its log: $state/worker.log)" >&2

# The pinned schemathesis (.ci/setup), through python3 whatever PATH holds; Hypothesis keeps its
# files under target/ rather than in the work tree.
export HYPOTHESIS_STORAGE_DIRECTORY=target/hypothesis
python3 -c 'import sys; from schemathesis.cli import schemathesis; sys.argv[0] = "schemathesis"; schemathesis()' \
  --config-file tests/harness/schemathesis.toml \
  run src/api/openapi.json --url "$url" \
  -H "Authorization: Bearer $ADMIN" \
  --checks all \
  --phases examples,coverage,fuzzing,stateful \
  --generation-database none \
  --seed "${SCHEMATHESIS_SEED:-1}" \
  --no-color \
  "$@"
