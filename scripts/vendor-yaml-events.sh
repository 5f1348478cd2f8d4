#!/usr/bin/env bash
# Rebuilds internal/yamlevent's upstream files from go.yaml.in/yaml/v3 (the
# version go.mod requires), or checks that the copies in the tree are exactly
# those (--check). See internal/yamlevent/README.md.
#
#   scripts/vendor-yaml-events.sh [--check]
#
# Needs the Go module proxy (or the module in the module cache).
set -euo pipefail
cd "$(dirname "$0")/.."

check=0
if [ "${1:-}" = "--check" ]; then check=1; fi
mod=go.yaml.in/yaml/v3
version=$(go list -m -f '{{.Version}}' "$mod")
dest=internal/yamlevent
files="apic.go parserc.go readerc.go scannerc.go yamlh.go yamlprivateh.go LICENSE NOTICE"

src=$(go mod download -json "$mod@$version" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
if [ -z "$src" ] || [ ! -f "$src/parserc.go" ]; then
  echo "vendor-yaml-events: cannot download $mod@$version" >&2
  exit 1
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# Upstream's files as released; the package clause is the only change.
for f in $files; do
  sed 's/^package yaml$/package yamlevent/' "$src/$f" > "$tmp/$f"
done
echo "$version" > "$tmp/UPSTREAM_VERSION"

status=0
for f in $files UPSTREAM_VERSION; do
  if [ "$check" = 1 ]; then
    if ! cmp -s "$tmp/$f" "$dest/$f"; then
      echo "vendor-yaml-events: $dest/$f differs from $mod@$version" >&2
      status=1
    fi
  else
    cp "$tmp/$f" "$dest/$f"
    chmod u+w "$dest/$f"
  fi
done
if [ "$check" = 1 ]; then
  [ "$status" = 0 ] && echo "$dest is $mod@$version's libyaml port (+ events.go)"
  exit $status
fi
echo "wrote $dest's upstream files from $mod@$version"
