#!/usr/bin/env bash
# dome gen --all over the example registry, and the Go client
# of the Stripe spec with a ~10% profile: dome's whole pipeline vs oapi-codegen's
# own CLI (the same version, from dome's go.mod) on the same filtered spec.
set -euo pipefail
cd "$(dirname "$0")/../.."
go run ./bench/gen -dome "${DOME_BIN:-bin/dome}" -work bench/.work/gen "$@"
