#!/usr/bin/env bash
# bench/accuracy.sh [BUILD_DIR]: the accuracy table of docs/ncu.md, from the committed H200
# captures (tests/fixtures/ncu/*/truth.txt): for each corpus and pass plan, how many first
# findings are right, how many say less (consistent but less specific), how many are wrong,
# and every miss. Needs a built profeed (default build/, then build-dev/) and python3.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-}
if [ -z "$build" ]; then
  for b in "$root/build" "$root/build-dev" "$root/build-test"; do
    [ -x "$b/client/profeed" ] && { build=$b; break; }
  done
fi
[ -n "$build" ] && [ -x "$build/client/profeed" ] || { echo "accuracy: build profeed first (cmake --build build)" >&2; exit 2; }
exec python3 "$root/bench/accuracy.py" "$build/client/profeed" "${@:2}"
