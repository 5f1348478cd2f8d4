#!/usr/bin/env bash
# Patch series applied with one commit per patch: dome patch apply --commit
# vs git am, on an ordinary series, the simulator's, and a real history when
# DOME_BENCH_HISTORY (or -history) names a repository (see main.go).
set -euo pipefail
cd "$(dirname "$0")/../.."
go run ./bench/patch -dome "${DOME_BIN:-bin/dome}" -work bench/.work/patch "$@"
