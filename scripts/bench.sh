#!/usr/bin/env bash
# Runs every benchmark under bench/ (each prints dome beside its peer and its
# floor or baselines, with medians, ranges and the load average). A bench that
# fails does not stop the others; the failed ones are named at the end and
# the exit status is 1.
set -uo pipefail
bin=$(realpath "${1:-bin/dome}")
cd "$(dirname "$0")/.."
export DOME_BIN="$bin"
failed=()
ran=0
for b in bench/*/run.sh; do
  [ -e "$b" ] || continue
  ran=$((ran + 1))
  echo "== $b (load average $(cut -d' ' -f1-3 /proc/loadavg))"
  if ! "$b"; then
    echo "== $b FAILED"
    failed+=("$b")
  fi
done
echo "== $ran benches, ${#failed[@]} failed"
if [ ${#failed[@]} -gt 0 ]; then
  printf 'failed: %s\n' "${failed[@]}"
  exit 1
fi
