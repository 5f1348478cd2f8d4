#!/usr/bin/env bash
# Issue 26 benchmark: a 1,000-node graph of no-op workers run by dome run
# start with the local dispatcher and with NATS JetStream dispatch to 8
# worker daemons (an embedded NATS server, the gateway on TLS, loopback):
# tasks per second, dispatch latency p50/p99, and the cost of killing two
# daemons mid-run. make fleet runs the checking simulation (-mode check).
set -euo pipefail
cd "$(dirname "$0")/../.."
go run ./bench/fleet -dome "${DOME_BIN:-bin/dome}" -work bench/.work/fleet -mode "${FLEET_MODE:-bench}" "$@"
