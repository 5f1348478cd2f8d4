#!/usr/bin/env bash
# make demo: the main job on the example registry in this repository.
# It reads the registry from git objects at HEAD (commit your changes first).
set -euo pipefail
dome=$(realpath "${1:-bin/dome}")
cd "$(dirname "$0")/.."
run() { printf '\n$ dome %s\n' "$*"; "$dome" "$@"; }

run --version
run registry list
for tool in $("$dome" registry list --json | sed -n 's/^      "id": "\(.*\)",$/\1/p'); do
  run resolve "$tool@HEAD" --profile "readonly@HEAD"
done
run registry show petstore@HEAD
run registry cat petstore@HEAD profiles/readonly.profile.json
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
for tool in $("$dome" registry list --json | sed -n 's/^      "id": "\(.*\)",$/\1/p'); do
  run spec filter "$tool@HEAD" --profile "readonly@HEAD" --out "$out/$tool.readonly.openapi.json"
done
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
# The same store over HTTP: dome serve on a free loopback port, the seed's reads, an idempotent
# republish (200) and a graceful stop (SIGTERM).
if command -v curl >/dev/null; then
  printf '\n$ dome serve --store %s --addr 127.0.0.1:0 &\n' "$store"
  ACTION_REGISTRY_API_KEY=demo-only-publish-key-0123456789 "$dome" serve --store "$store" --addr 127.0.0.1:0 2> "$out/serve.log" &
  serve=$!
  for _ in $(seq 1 100); do grep -q '"msg":"listening"' "$out/serve.log" && break; sleep 0.1; done
  url=$(sed -n 's/.*"msg":"listening".*"url":"\([^"]*\)".*/\1/p' "$out/serve.log")
  for path in /actions /actions/files.move/versions/1.1.0 /actions/files.move/versions/1.1.0/verify /actions/files.move/versions/9.9.9; do
    printf '\n$ curl %s%s\n' "$url" "$path"; curl -s "$url$path"
  done
  printf '\n$ curl -X POST -H "X-API-Key: ..." --data-binary @registry/actions/http.get/0.1.0.json %s/actions/http.get/versions/0.1.0\n' "$url"
  curl -s -o /dev/null -w '%{http_code}\n' -X POST -H 'X-API-Key: demo-only-publish-key-0123456789' -H 'Content-Type: application/json' \
    --data-binary @registry/actions/http.get/0.1.0.json "$url/actions/http.get/versions/0.1.0"
  kill -TERM "$serve"; wait "$serve"
  printf '\n$ tail -3 serve.log\n'; tail -3 "$out/serve.log"
fi
unset TRUSTED_KEYS_PATH
