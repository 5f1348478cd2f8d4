#!/usr/bin/env bash
# RFC 8785 canonicalization (dome vs node canonicalize vs
# encoding/json) and Ed25519 verification (dome vs crypto/ed25519), interleaved.
set -euo pipefail
cd "$(dirname "$0")/../.."
work=bench/.work/canonical
mkdir -p "$work"
if [ ! -x /usr/bin/time ]; then
  echo "bench/canonical: peak memory is measured with GNU time (apt-get install -y time)" >&2
  exit 1
fi
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
  echo "bench/canonical: the peer needs node and npm (apt-get install -y nodejs npm)" >&2
  exit 1
fi
if [ ! -f "$work/node_modules/canonicalize/package.json" ]; then
  npm install --prefix "$work" --no-audit --no-fund --loglevel=error canonicalize@5.1.0 >&2
fi
go run ./bench/canonical -dome "${DOME_BIN:-bin/dome}" -work "$work" "$@"
