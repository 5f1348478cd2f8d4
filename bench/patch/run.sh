#!/usr/bin/env bash
# Issue 7 benchmark: a 500-patch series applied with one commit per patch:
# dome (one process, objects straight to the object store) vs git am vs a
# loop of git apply --index && git commit; final trees checked equal.
set -euo pipefail
cd "$(dirname "$0")/../.."
go run ./bench/patch -dome "${DOME_BIN:-bin/dome}" -work bench/.work/patch "$@"
