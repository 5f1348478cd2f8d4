#!/usr/bin/env bash
# Issue 20 benchmark: grant verification (dome vs raw crypto/ed25519.Verify, the
# floor, vs golang-jwt/jwt/v5 EdDSA, the peer), verify + spend per second on the
# file store (durable before ack) and on PostgreSQL, and derive against a
# 100-capability resolver spec; one run, with the load average.
set -euo pipefail
cd "$(dirname "$0")/../.."
go run ./bench/grant "$@"
