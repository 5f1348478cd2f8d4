#!/usr/bin/env bash
# The web view's benchmark: the run page of a 1,000-node stack run and of a
# real 1,000-node wave run (dome serve --ui) beside the JSON answer for the
# same data (run.json; for the wave run also dome run status --json) and the
# floor (GET /healthz), over HTTP on loopback. The wave run is made once
# (about 4 minutes) and kept under bench/.work/webui.
set -euo pipefail
cd "$(dirname "$0")/../.."
go run ./bench/webui -dome "${DOME_BIN:-bin/dome}" -work bench/.work/webui "$@"
