#!/usr/bin/env bash
# Per-call overhead of the generated clients' enforcement
# layer (policy checks, credentials, timeouts/retries) against the same client
# without it, in Go, TypeScript (node) and Python, on a loopback round trip.
set -euo pipefail
cd "$(dirname "$0")/../.."
for t in go node python3 git; do
  command -v "$t" >/dev/null || { echo "bench/sdk: $t is needed" >&2; exit 1; }
done
tsc=contract-tests/ts/node_modules/.bin/tsc
[ -x "$tsc" ] || npm ci --prefix contract-tests/ts --no-audit --no-fund --loglevel=error >&2
go run ./bench/sdk -dome "${DOME_BIN:-bin/dome}" -tsc "$tsc" "$@"
