#!/usr/bin/env bash
# dome spec filter vs openapi-format (npm) on Stripe's and GitHub's OpenAPI
# descriptions (see main.go): medians and ranges of interleaved runs.
set -euo pipefail
cd "$(dirname "$0")/../.."
go run ./bench/filter -dome "${DOME_BIN:-bin/dome}" -work bench/.work/filter "$@"
