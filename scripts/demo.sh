#!/usr/bin/env bash
# make demo: the main job on the example registry in this repository.
# It reads the registry from git objects at HEAD (commit your changes first).
set -euo pipefail
dome=$(realpath "${1:-bin/dome}")
cd "$(dirname "$0")/.."
run() { printf '\n$ dome %s\n' "$*"; "$dome" "$@"; }

run --version
run registry list
# Each tool with its readonly profile, or its default one (the skill contracts ship only default).
pairs=$("$dome" registry list | awk 'NR > 2 { p = "default"; if ($2 ~ /(^|,)readonly(,|$)/) p = "readonly"; print $1, p }')
while read -r tool profile; do
  run resolve "$tool@HEAD" --profile "$profile@HEAD"
done <<< "$pairs"
run registry show petstore@HEAD
run registry cat petstore@HEAD profiles/readonly.profile.json
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
while read -r tool profile; do
  run spec filter "$tool@HEAD" --profile "$profile@HEAD" --out "$out/$tool.$profile.openapi.json"
done <<< "$pairs"
run spec filter ticketing@HEAD --profile highrisk@HEAD --out "$out/ticketing.highrisk.openapi.json" --explain
# Trust core: canonical bytes, digests, keys and signatures over the filtered spec.
run digest "$out/ticketing.highrisk.openapi.json" "$out/petstore.readonly.openapi.json"
run keygen --kid demo-1 --out "$out/keys"
"$dome" sign --key "$out/keys/demo-1.key" --kind dome.filtered_spec/v1 "$out/petstore.readonly.openapi.json" > "$out/petstore.sig.json"
printf '\n$ dome sign --key demo-1.key --kind dome.filtered_spec/v1 petstore.readonly.openapi.json\n'; cat "$out/petstore.sig.json"
run verify --trusted "$out/keys/demo-1.trusted.json" --kind dome.filtered_spec/v1 --sig "$out/petstore.sig.json" "$out/petstore.readonly.openapi.json"
# Deterministic clients: every tool x profile x language, the drift check, the manifests, a contract test.
run gen --all --out "$out/clients"
run gen --check --out "$out/clients"
printf '// hand edit\n' >> "$out/clients/client/ts/petstore/readonly/client.ts"
printf '\n$ dome gen --check --out clients   # after a hand edit: exit 1\n'
"$dome" gen --check --out "$out/clients" || true
run gen --all --out "$out/clients"
run manifest verify "$out/clients/client/go/petstore"
run contract-test petstore@HEAD --profile readonly@HEAD
# Agent lock: examples/hello-agent's MCP servers, from the example index and from the registry at HEAD.
run agent discover --index examples/hello-agent/mcp.index.json --category audiences
run agent resolve --agents examples/hello-agent/agents.md --index examples/hello-agent/mcp.index.json --check
run agent resolve --agents examples/hello-agent/agents.md --index-ref HEAD --lock "$out/agents.lock" --explain
# Agent profiles (registry/agents at HEAD): pick an agent for a task, then run the planner's
# four-step workflow (two steps delegated to the writer and the reviewer) on the exec provider,
# with examples/agent-exec/echo-model.sh standing in for a model; every step and checkpoint is an
# event under the run's folder. The repo scout's tool steps go through a grant.
run agent list
run agent select "plan a documentation change" --explain --limit 3
run workflow validate planner
run workflow run planner "plan a README section on agents" --exec examples/agent-exec/echo-model.sh --ops "$out/runs" --run plan-demo
run workflow status --ops "$out/runs" --run plan-demo --json
run workflow run repo-scout "fuzz" --exec examples/agent-exec/echo-model.sh --ops "$out/runs" --run scout-demo
# Contracts: a command in a project compiled into the contract text (catalog at HEAD).
run contract list --ref HEAD
run contract resolve --ref HEAD --project acme-web --command create-component --input "Button with variants" --now 2026-01-02T03:04:05Z
# Signed action registry: publish the example actions (signed with the DEV-ONLY key) to a
# throwaway git store, then discover, fetch, verify, lock and audit them.
export TRUSTED_KEYS_PATH=examples/actions/keys/dev-only-insecure-1.trusted.json
store="git:$out/actions.git"
run action publish --store "$store" registry/actions/*/*.json
run action publish --store "$store" registry/actions/files.move/1.0.0.json
run action list --store "$store"
run action show --store "$store" files.move
run action verify --store "$store" files.move@1.1.0
run action lock --store "$store" --out "$out/actions.lock" 'files.move@^1.0.0' 'files.read@~1.0' http.get
cat "$out/actions.lock"
run action lock --store "$store" --out "$out/actions.lock" --check
run action audit --store "$store"
run action deprecate --store "$store" files.move@1.0.0 --reason 'use 1.1.0: 1.0.0 drops file modes'
run action list --store "$store"
run action deprecate --store "$store" files.move@1.0.0 --undo
# The same store over HTTP: dome serve on a free loopback port, the API's reads, an idempotent
# republish (200) and a graceful stop (SIGTERM).
if command -v curl >/dev/null; then
  printf '\n$ dome serve --ui --store %s --addr 127.0.0.1:0 &\n' "$store"
  ACTION_REGISTRY_API_KEY=demo-only-publish-key-0123456789 "$dome" serve --ui --store "$store" --addr 127.0.0.1:0 2> "$out/serve.log" &
  serve=$!
  for _ in $(seq 1 100); do grep -q '"msg":"listening"' "$out/serve.log" && break; sleep 0.1; done
  url=$(sed -n 's/.*"msg":"listening".*"url":"\([^"]*\)".*/\1/p' "$out/serve.log")
  for path in /actions /actions/files.move/versions/1.1.0 /actions/files.move/versions/1.1.0/verify /actions/files.move/versions/9.9.9; do
    printf '\n$ curl %s%s\n' "$url" "$path"; curl -s "$url$path"
  done
  printf '\n$ curl -X POST -H "X-API-Key: ..." --data-binary @registry/actions/http.get/0.1.0.json %s/actions/http.get/versions/0.1.0\n' "$url"
  curl -s -o /dev/null -w '%{http_code}\n' -X POST -H 'X-API-Key: demo-only-publish-key-0123456789' -H 'Content-Type: application/json' \
    --data-binary @registry/actions/http.get/0.1.0.json "$url/actions/http.get/versions/0.1.0"
  # The web view (docs/web.md): HEAD redirects to its commit; pages are HTML.
  for path in /ui/registry/HEAD/ /ui/actions/files.move/; do
    printf '\n$ curl -L %s%s\n' "$url" "$path"
    curl -sL -w '%{http_code} %{url_effective}\n' -o "$out/page.html" "$url$path"
    sed -n 's/.*<title>\(.*\)<\/title>.*/title: \1/p' "$out/page.html"
  done
  kill -TERM "$serve"; wait "$serve"
  printf '\n$ tail -3 serve.log\n'; tail -3 "$out/serve.log"
fi
unset TRUSTED_KEYS_PATH
# Grants: a worker's ToolProfile = policy ∩ resolver(its capabilities) ∩ the card of what runs it,
# issued and signed for one node attempt, verified, spent once (the replay is refused), revoked.
run registry cards
run grant derive --card runtime/dome-worker -c repo.read,repo.propose --node node-1 --explain
run keygen --kid coordinator-grants --out "$out/grant-keys" > /dev/null
grant="$out/grant.json"
run grant issue --card runtime/dome-worker -c repo.read,repo.propose --node node-1 --key "$out/grant-keys/coordinator-grants.key" \
  --run demo-run --wave wave-1 --worker w-1 --node-execution ne-1 --now 2026-01-02T03:04:05Z -o "$grant"
run grant inspect "$grant" --trusted "$out/grant-keys/coordinator-grants.trusted.json"
bind=(--trusted "$out/grant-keys/coordinator-grants.trusted.json" --audience worker_runtime --run demo-run --wave wave-1
  --worker w-1 --node-execution ne-1 --now 2026-01-02T03:05:00Z --store "$out/grants")
run grant verify "$grant" "${bind[@]}" --method repo-read/read_file --read README.md
printf '\n$ dome grant verify grant.json ... --method repo-read/read_file --read .git/config   # exit 1\n'
"$dome" grant verify "$grant" "${bind[@]}" --method repo-read/read_file --read .git/config || true
run grant spend "$grant" "${bind[@]}" --method patch-proposal/submit_patch
printf '\n$ dome grant spend grant.json ...   # the replay: exit 1\n'
"$dome" grant spend "$grant" "${bind[@]}" --method patch-proposal/submit_patch || true
run grant revoke "$grant" --profile --store "$out/grants" --reason 'demo: node cancelled' --now 2026-01-02T03:06:00Z
printf '\n$ dome grant verify grant.json ...   # revoked: exit 1\n'
"$dome" grant verify "$grant" "${bind[@]}" --now 2026-01-02T03:07:00Z || true
# The SpawnSpec that dispatches the worker names the grant by digest; the dispatcher validates it.
spec_body="{\"action_spec\":{\"intent\":\"docs.update\"},\"container_ref\":\"ghcr.io/dome/worker@sha256:$(printf '2%.0s' $(seq 64))\",\"determinism_seed\":7,\"node_execution_id\":\"ne-1\",\"node_id\":\"node-1\",\"run_id\":\"demo-run\",\"task_spec_ref\":\"ops/runs/demo-run/work.queue.json@$(git rev-parse HEAD)\",\"tool_profile_ref\":\"$("$dome" digest --raw "$grant")\",\"wave_id\":\"wave-1\"}"
printf '%s' "$spec_body" > "$out/spawn.body.json"
printf '%s' "${spec_body%\}},\"inputs_hash\":\"$("$dome" digest "$out/spawn.body.json")\"}" > "$out/spawn.json"
run spawn validate "$out/spawn.json" --grant "$grant"
# Stacked patches: three workers propose changes to a small Go module, two of them to the same
# line; the coordinator verifies, plans, applies a checkpoint per layer, validates (the fast tier
# of policy/stack_policy.json: gofmt and go vet) and promotes only with the whole evidence chain.
if command -v git >/dev/null && command -v go >/dev/null; then
  repo="$out/stack-repo"
  mkdir -p "$repo/greet" "$out/proposals"
  cp policy/stack_policy.json "$out/stack_policy.json"
  (
    cd "$repo"
    export GIT_AUTHOR_NAME=demo GIT_AUTHOR_EMAIL=demo@example.com GIT_COMMITTER_NAME=demo GIT_COMMITTER_EMAIL=demo@example.com
    export SOURCE_DATE_EPOCH=1767225600 GOFLAGS=-mod=mod
    printf 'module example.com/greet\n\ngo 1.22\n' > go.mod
    printf 'package greet\n\n// Hello greets name.\nfunc Hello(name string) string {\n\treturn "hello, " + name\n}\n' > greet/greet.go
    printf '# greet\n\nA tiny module.\n' > README.md
    git init -q -b main && git add -A && git commit -q -m base
    base=$(git rev-parse HEAD)
    run stack init --run demo --base "$base" --policy "$out/stack_policy.json"
    printf '# greet\n\nA tiny module that says hello.\n' > README.md
    run stack propose --run demo --from-worktree . --worker w1 --id w1-readme --intent docs -o "$out/proposals/w1.json"
    git checkout -q -- .
    printf 'package greet\n\n// Hello greets name.\nfunc Hello(name string) string {\n\treturn "hello, " + name\n}\n\n// Bye says goodbye to name.\nfunc Bye(name string) string {\n\treturn "bye, " + name\n}\n' > greet/greet.go
    run stack propose --run demo --from-worktree . --worker w2 --id w2-bye --intent feature -o "$out/proposals/w2.json"
    git checkout -q -- .
    printf '# greet\n\nA module that greets.\n' > README.md
    run stack propose --run demo --from-worktree . --worker w3 --id w3-readme --intent docs -o "$out/proposals/w3.json"
    git checkout -q -- .
    run stack submit --run demo "$out"/proposals/w*.json
    run stack plan --run demo
    run stack plan --run demo --format mermaid
    run stack apply --run demo
    git log --format='%h %s' refs/dome/integration/demo
    printf '\n$ dome stack promote --run demo --to refs/heads/release   # before validation: exit 1\n'
    "$dome" stack promote --run demo --to refs/heads/release || true
    run stack validate --run demo --tier fast
    run keygen --kid coordinator-demo --out "$out/coordinator-keys" >/dev/null
    run stack promote --run demo --to refs/heads/release --sign-key "$out/coordinator-keys/coordinator-demo.key"
    run stack verify --run demo --trusted "$out/coordinator-keys/coordinator-demo.trusted.json"
    run stack status --run demo
    run stack replay --run demo
  )
fi

# Waves of sandboxed workers (examples/waves): a dozen Python workers over a
# small module, each with only the gateway's socket and its grant; five are
# hostile (.git/config, the network, a call flood, a sleeper, a write outside
# its roots) and fail with their reason codes while the rest is stacked.
if command -v git >/dev/null && command -v python3 >/dev/null && command -v go >/dev/null; then
  chmod 711 "$out" # the sandbox user reaches the workers' tools below it
  examples/waves/run.sh "$dome" "$out/waves"
fi
