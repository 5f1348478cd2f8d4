#!/usr/bin/env bash
# dome registry reads vs the git CLI on 2,000 tools x 5,000 commits
# (-other LABEL=PATH: another dome build in the cold-read loop).
set -euo pipefail
cd "$(dirname "$0")/../.."
go run ./bench/resolve -dome "${DOME_BIN:-bin/dome}" -work bench/.work/resolve "$@"
