#!/usr/bin/env bash
# Issue 28 benchmark: the web view's run page of a 1,000-node stack run
# (dome serve --ui) beside the JSON answer for the same data (run.json) and
# the floor (GET /healthz), over HTTP on loopback.
set -euo pipefail
cd "$(dirname "$0")/../.."
go run ./bench/webui -dome "${DOME_BIN:-bin/dome}" -work bench/.work/webui "$@"
