#!/usr/bin/env bash
# make test TESTJSON=FILE: run go test -json over the module and keep its
# output in FILE, headed by a line naming the commit the tests ran at (dome
# trace check --results FILE refuses results of another commit). The
# terminal shows each package's ok/FAIL line and each failed test as go
# test prints them; the exit status is go test's.
set -uo pipefail
out=${1:?usage: scripts/testjson.sh FILE [go test flags and packages]}
shift
case $out in /*) ;; *) out=$PWD/$out ;; esac
cd "$(dirname "$0")/.."
go=${GO:-go}
commit=$(git rev-parse HEAD) || { echo "testjson: not in a git repository with a commit" >&2; exit 2; }
dirty=false
if [ -n "$(git status --porcelain --untracked-files=no)" ]; then dirty=true; fi
mkdir -p "$(dirname "$out")"
printf '{"kind":"dome.test_results/v1","commit":"%s","dirty":%s}\n' "$commit" "$dirty" > "$out"
"$go" test -json "$@" | tee -a "$out" |
  sed -un 's/^{.*"Action":"output",.*"Output":"\(ok  \\t\|FAIL\|--- FAIL\|panic: \)\(.*\)\\n"}$/\1\2/p' |
  sed -u 's/\\t/\t/g'
exit "${PIPESTATUS[0]}"
