#!/usr/bin/env bash
# Stacking benchmark: small non-overlapping proposals stacked onto a
# repository of 10,000 files, one checkpoint commit per layer: dome stack apply
# vs a loop of git apply --index && git commit, in alternating rounds, with an
# in-process baseline (pkg/patch.Apply + gitstore.WriteCommit); final trees
# checked equal.
set -euo pipefail
cd "$(dirname "$0")/../.."
go run ./bench/stack -dome "${DOME_BIN:-bin/dome}" -work bench/.work/stack "$@"
