#!/usr/bin/env bash
# Proves that a user's `go install github.com/dome-registry/dome/cmd/dome@VERSION`
# works, with the programs dome runs from beside itself (cmd/dome-full, the
# whole command set; cmd/dome-openai and cmd/dome-otel, the helpers): the committed module (HEAD, or $1) served as VERSION by a local
# module proxy, installed with a clean GOPATH and module cache, GOFLAGS=-mod=mod,
# no go.work and no checksum database; its dependencies come from this
# machine's module cache (served as a second file:// proxy), then the
# configured Go module proxy. The installed dome must run and report VERSION.
set -euo pipefail
cd "$(dirname "$0")/.."
rev=${1:-HEAD}
version=v0.99.0-installcheck
tmp=$(mktemp -d)
trap 'chmod -R u+w "$tmp" 2>/dev/null; rm -rf "$tmp"' EXIT
GOWORK=off go run ./internal/modzip -version "$version" -rev "$rev" -out "$tmp/proxy"
cache=$(go env GOMODCACHE)/cache/download
upstream=$(go env GOPROXY)
mkdir -p "$tmp/elsewhere"
(
  cd "$tmp/elsewhere"
  env GOPATH="$tmp/gopath" GOMODCACHE="$tmp/gopath/pkg/mod" GOFLAGS=-mod=mod GOWORK=off \
    GOSUMDB=off GOTOOLCHAIN=local GOPROXY="file://$tmp/proxy,file://$cache,$upstream" \
    go install "github.com/dome-registry/dome/cmd/dome@$version" \
      "github.com/dome-registry/dome/cmd/dome-full@$version" \
      "github.com/dome-registry/dome/cmd/dome-openai@$version" \
      "github.com/dome-registry/dome/cmd/dome-otel@$version"
)
out=$("$tmp/gopath/bin/dome" version --json)
echo "$out"
if ! grep -q "\"version\": \"$version\"" <<<"$out"; then
  echo "go-install-check: the installed dome does not report $version" >&2
  exit 1
fi
# registry list is handed to the installed dome-full, registry cat is the
# front's own.
"$tmp/gopath/bin/dome" --repo . registry list >/dev/null
"$tmp/gopath/bin/dome" --repo . registry cat petstore@HEAD tool.json >/dev/null
"$tmp/gopath/bin/dome-full" version --json | grep -q "\"version\": \"$version\"" ||
  { echo "go-install-check: the installed dome-full does not report $version" >&2; exit 1; }
"$tmp/gopath/bin/dome-otel" --version | grep -q "dome-otel $version" ||
  { echo "go-install-check: the installed dome-otel does not report $version" >&2; exit 1; }
# The installed dome-openai links the SDK version the example runtime pins.
pin=$(sed -n 's/.*"version": *"\(v[^"]*\)".*/\1/p' registry/agents/runtimes/openai.runtime.json)
sdk=$("$tmp/gopath/bin/dome-openai" --sdk-version)
if [ "$sdk" != "$pin" ]; then
  echo "go-install-check: the installed dome-openai links openai-go $sdk; registry/agents/runtimes/openai.runtime.json pins $pin" >&2
  exit 1
fi
echo "go-install-check: go install github.com/dome-registry/dome/cmd/{dome,dome-full,dome-openai,dome-otel}@$version works (dome-openai links openai-go $sdk)"
