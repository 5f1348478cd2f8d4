#!/usr/bin/env bash
# A deterministic stand-in model for dome's exec provider (make demo, tests).
# It reads one dome.agent_request/v1 JSON object on stdin and answers one
# JSON object {"text": ..., "usage": ...} on stdout: the agent, the step, the
# model, whether abilities were injected into the system prompt, and the
# sha256 of the request, so the same request always gets the same answer.
# Replace it with any command that speaks the same protocol (a local model
# server's client, a script calling an API).
set -euo pipefail
req=$(cat)
agent=unknown; step=unknown; model=unknown; abilities=no
[[ $req =~ \"agent\":\"([a-z0-9-]+)\" ]] && agent=${BASH_REMATCH[1]}
[[ $req =~ \"step\":\"([a-z0-9_-]+)\" ]] && step=${BASH_REMATCH[1]}
[[ $req =~ \"model\":\"([A-Za-z0-9._:/-]+)\" ]] && model=${BASH_REMATCH[1]}
[[ $req == *'# Abilities'* ]] && abilities=yes
sum=$(printf '%s' "$req" | sha256sum | cut -c1-12)
printf '{"text":"%s/%s answered by %s (abilities: %s, request %s, %d bytes)","usage":{"promptTokens":%d,"completionTokens":12}}\n' \
  "$agent" "$step" "$model" "$abilities" "$sum" "${#req}" "$(( ${#req} / 4 ))"
