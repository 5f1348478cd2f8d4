#!/usr/bin/env bash
# Runs every benchmark script under bench/ (each prints "workload | dome | peer | ratio | floor" rows).
set -euo pipefail
bin=$(realpath "${1:-bin/dome}")
cd "$(dirname "$0")/.."
export DOME_BIN="$bin"
status=0
for b in bench/*/run.sh; do
  [ -e "$b" ] || continue
  echo "== $b"
  "$b" || { echo "bench $b failed"; status=1; }
done
exit $status
