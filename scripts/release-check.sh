#!/usr/bin/env bash
# Checks the release configuration with goreleaser itself: goreleaser check on
# .goreleaser.yaml, then snapshot builds of dome, dome-full and the helpers for this
# platform, twice each, whose binaries must be byte-identical (-trimpath, no build id, commit-time file
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
# dome and its helper programs, each built twice.
for id in dome dome-full dome-openai dome-otel; do
  for i in 1 2; do
    "$tools/goreleaser" build --snapshot --clean --single-target --id "$id" --output "$tmp/$id-$i" >"$tmp/build-$id-$i.log" 2>&1 ||
      { cat "$tmp/build-$id-$i.log"; exit 1; }
  done
  if ! cmp "$tmp/$id-1" "$tmp/$id-2"; then
    echo "release-check: two snapshot builds of $id from one commit differ: the release build is not reproducible" >&2
    exit 1
  fi
done
# The archives' other platform: every program must build for darwin
# (goreleaser builds only this platform above).
for id in dome dome-full dome-openai dome-otel; do
  GOOS=darwin GOARCH=arm64 CGO_ENABLED=0 go build -trimpath -tags urfave_cli_no_docs -o "$tmp/darwin-$id" "./cmd/$id" ||
    { echo "release-check: cmd/$id does not build for darwin/arm64, which .goreleaser.yaml releases" >&2; exit 1; }
done
"$tmp/dome-1" version
"$tmp/dome-full-1" version
"$tmp/dome-openai-1" --version
"$tmp/dome-otel-1" --version
echo "release-check: goreleaser check passed; two snapshot builds of dome, dome-full, dome-openai and dome-otel are byte-identical ($(sha256sum "$tmp/dome-1" | cut -c1-16)...)"
