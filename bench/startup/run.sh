#!/usr/bin/env bash
# Start-up benchmark: dome --version and a cold dome registry cat beside
# git --version and git show, interleaved in one run, on this repository's
# own history. bin/dome is the front, which runs both itself; a second row
# set measures bin/dome-full, the whole command set, running them (what
# every dome start cost before the front), and a last row the hand-over of
# every other command from dome to dome-full; more with -other LABEL=PATH.
set -euo pipefail
cd "$(dirname "$0")/../.."
dome=${DOME_BIN:-bin/dome}
go run ./bench/startup -dome "$dome" -other "dome-full=$(dirname "$dome")/dome-full" "$@"
