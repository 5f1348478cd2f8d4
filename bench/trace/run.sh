#!/usr/bin/env bash
# dome trace check over the whole requirements catalogue
# and a full go test -json log (budget: 2 s); the test index against go test
# -list, the log parser against jq.
set -euo pipefail
cd "$(dirname "$0")/../.."
go run ./bench/trace -dome "${DOME_BIN:-bin/dome}" -work bench/.work/trace "$@"
