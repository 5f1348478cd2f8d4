#!/usr/bin/env bash
# Scheduling a 10,000-node random DAG with pkg/workflow
# (floor: a bare topological sort), refusing a hostile 100,000-task queue,
# dome run plan end to end, and the overhead of a sandboxed dispatch against
# a bare "bwrap ... true" with the same namespaces and mounts (the floor);
# gateway read_file with the grant verified per call against git cat-file
# --batch (the peer); a 200-node wave end to end, dome run start against
# xargs -P running the same workers then dome stack submit/plan/apply.
set -euo pipefail
cd "$(dirname "$0")/../.."
go run ./bench/run -dome "${DOME_BIN:-bin/dome}" -work bench/.work/run "$@"
