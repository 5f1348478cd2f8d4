#!/usr/bin/env bash
# Re-signs the example action documents (src/*.json) with the DEV-ONLY key and
# writes them to registry/actions/<name>/<version>.json. Ed25519 is
# deterministic: running it again gives the same bytes.
set -euo pipefail
dome=$(realpath "${1:-bin/dome}")
cd "$(dirname "$0")/../.."
for src in examples/actions/src/*.json; do
  base=$(basename "$src" .json)
  name=${base%%-[0-9]*}
  version=${base#"$name"-}
  mkdir -p "registry/actions/$name"
  "$dome" action sign --key examples/actions/keys/dev-only-insecure-1.key "$src" -o "registry/actions/$name/$version.json"
done
