#!/usr/bin/env bash
# Agent selection among 1,000 and 10,000 profiles (floor:
# a bare scan of the same example tasks), loading and validating them, dome
# agent select end to end on a registry of 1,000 agent files, and the
# workflow engine's overhead per step, checkpoint durable before the next
# step, against calling the step function directly (the floor).
set -euo pipefail
cd "$(dirname "$0")/../.."
go run ./bench/agent -dome "${DOME_BIN:-bin/dome}" -work bench/.work/agent "$@"
