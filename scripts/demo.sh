#!/usr/bin/env bash
# make demo: the main job on the example registry in this repository.
set -euo pipefail
dome=$(realpath "${1:-bin/dome}")
cd "$(dirname "$0")/.."
echo "\$ dome --version"
"$dome" --version
