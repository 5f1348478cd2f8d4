#!/usr/bin/env bash
# Start-up benchmark: dome --version and a cold dome registry cat beside
# git --version and git show, interleaved in one run, on this repository's
# own history. A second row set measures the same source built as
# `go install` builds it (GOWORK=off: upstream santhosh-tekuri/jsonschema);
# more with -other LABEL=PATH.
set -euo pipefail
cd "$(dirname "$0")/../.."
mkdir -p bench/.work/startup
GOWORK=off CGO_ENABLED=0 go build -trimpath -tags urfave_cli_no_docs -ldflags '-s -w' -o bench/.work/startup/dome-go-install ./cmd/dome
go run ./bench/startup -dome "${DOME_BIN:-bin/dome}" -other "go install build=bench/.work/startup/dome-go-install" "$@"
