#!/usr/bin/env bash
# Grant verification (dome vs raw crypto/ed25519.Verify, the
# floor, vs golang-jwt/jwt/v5 EdDSA, the peer), verify + spend per second on the
# file store (durable before ack) and on PostgreSQL, and derive against a
# 100-capability resolver spec; interleaved rounds, medians and ranges, the load average.
set -euo pipefail
cd "$(dirname "$0")/../.."
go run ./bench/grant "$@"
