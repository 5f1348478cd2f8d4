#!/usr/bin/env bash
# The waves example: a dozen workers over the greet module, run by dome run
# start in waves of sandboxed workers. Usage: examples/waves/run.sh [DOME] [WORKDIR]
#
# It builds a repository of the module with the registry's two skills and
# the worker card (registry/), this example's policies (policy/), generates
# the workers' Python clients of the skills with dome gen, draws the graph,
# runs the queue and shows what happened. Without bubblewrap the workers run
# unconfined (--sandbox=none, which the run manifest records).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
dome="$(cd "$(dirname "${1:-$root/bin/dome}")" && pwd)/$(basename "${1:-$root/bin/dome}")"
work="${2:-$(mktemp -d)}"
mkdir -p "$work"
chmod 755 "$work" # the sandbox user reaches the workers' tools through it
run() { printf '\n$ dome %s\n' "$*"; "$dome" "$@"; }

repo="$work/repo"
rm -rf "$repo" "$work/tools"
mkdir -p "$repo/registry/tools" "$repo/registry/a2a/cards/runtime" "$repo/policy"
cp -r "$here/module/." "$repo/"
cp -r "$root/registry/tools/repo-read" "$root/registry/tools/patch-proposal" "$root/registry/tools/repo-admin" "$repo/registry/tools/"
cp "$root/registry/a2a/cards/runtime/dome-worker.card.json" "$repo/registry/a2a/cards/runtime/"
cp "$here/policy/"*.json "$repo/policy/"
cp -r "$root/generators" "$repo/generators"
(
  cd "$repo"
  export GIT_AUTHOR_NAME=demo GIT_AUTHOR_EMAIL=demo@example.com GIT_COMMITTER_NAME=demo GIT_COMMITTER_EMAIL=demo@example.com
  git init -q -b main && git add -A && git commit -q -m 'the greet module, the skills, the policies'
)

# The workers' tools: the scripts and the generated clients of the skills.
mkdir -p "$work/tools"
cp "$here/workers/"*.py "$work/tools/"
cd "$repo"
run gen repo-read@HEAD --lang python --out "$work/tools/clients"
run gen patch-proposal@HEAD --lang python --out "$work/tools/clients"
chmod -R o+rX "$work/tools"

cp "$here/work.queue.json" "$work/work.queue.json"
run run validate "$work/work.queue.json"
run run graph "$work/work.queue.json" --format mermaid | tee "$work/graph.mmd"
"$dome" run graph "$work/work.queue.json" --format dot > "$work/graph.dot"
printf '(also drawn for Graphviz: %s)\n' "$work/graph.dot"

sandbox=bwrap
if ! "$dome" sandbox check >/dev/null 2>&1; then
  echo "bubblewrap cannot run here ($("$dome" sandbox check 2>&1 | head -1)): the workers run unconfined"
  sandbox=none
fi
# The hostile workers fail, each with its reason code; the rest lands on
# the integration ref. The run stops constraints_unmet (exit 1), saying which.
run run start "$work/work.queue.json" --tools "$work/tools" --sandbox "$sandbox" --verbose || true
run run status waves --tasks
run run replay waves
printf '\n$ git diff --stat main refs/dome/integration/waves\n'
git diff --stat main refs/dome/integration/waves
