#!/usr/bin/env bash
# dome serve (git store, PostgreSQL store) vs nginx serving
# the same JSON bodies as static files, wrk at 64 connections on loopback.
set -euo pipefail
cd "$(dirname "$0")/../.."
missing=()
for tool in wrk nginx; do command -v "$tool" >/dev/null || missing+=("$tool"); done
if [ ${#missing[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    echo "bench/serve: installing ${missing[*]} (apt-get)" >&2
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${missing[@]}" >/dev/null \
      || { apt-get update -q >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${missing[@]}" >/dev/null; }
  else
    echo "bench/serve: skipped: ${missing[*]} not installed (apt-get install -y wrk nginx)" >&2
    exit 0
  fi
fi
go run ./bench/serve -dome "${DOME_BIN:-bin/dome}" -work bench/.work/serve "$@"
