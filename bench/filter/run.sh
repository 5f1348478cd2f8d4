#!/usr/bin/env bash
# Issue 4 benchmark: dome spec filter vs openapi-format (npm) on the Stripe spec.
set -euo pipefail
cd "$(dirname "$0")/../.."
go run ./bench/filter -dome "${DOME_BIN:-bin/dome}" -work bench/.work/filter "$@"
