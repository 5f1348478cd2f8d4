#!/usr/bin/env bash
# Checks the release configuration with goreleaser itself: goreleaser check on
# .goreleaser.yaml, then a snapshot build for this platform, twice, whose
# binaries must be byte-identical (-trimpath, no build id, commit-time file
# times). goreleaser is built once from the Go module proxy into bin/tools.
set -euo pipefail
cd "$(dirname "$0")/.."
version=v2.15.1
tools=$PWD/bin/tools
if ! "$tools/goreleaser" --version 2>/dev/null | grep -Eq "GitVersion: +v?${version#v}$"; then
  echo "release-check: building goreleaser $version (once, into bin/tools)"
  (cd "${TMPDIR:-/tmp}" && GOBIN="$tools" GOWORK=off GOFLAGS=-mod=mod go install "github.com/goreleaser/goreleaser/v2@$version")
fi
"$tools/goreleaser" check
tmp=$(mktemp -d)
trap 'rm -rf "$tmp" dist completions' EXIT
for i in 1 2; do
  "$tools/goreleaser" build --snapshot --clean --single-target --output "$tmp/dome-$i" >"$tmp/build-$i.log" 2>&1 ||
    { cat "$tmp/build-$i.log"; exit 1; }
done
if ! cmp "$tmp/dome-1" "$tmp/dome-2"; then
  echo "release-check: two snapshot builds of one commit differ: the release build is not reproducible" >&2
  exit 1
fi
"$tmp/dome-1" version
echo "release-check: goreleaser check passed; two snapshot builds are byte-identical ($(sha256sum "$tmp/dome-1" | cut -c1-16)...)"
