#!/usr/bin/env bash
# An installed copy stands on its own (issue 16): install_test.sh BUILD_DIR
#
# `cmake --install BUILD --prefix P` writes under P only (its manifest lists
# nothing outside P), and P/bin/profeed submit --local replays the capture
# installed in P, not the one in the clone it was built from.
set -uo pipefail
build=$(cd "$1" && pwd)
fail=0
check() { # check DESCRIPTION COMMAND...
  if "${@:2}"; then echo "ok   - $1"; else echo "FAIL - $1"; fail=1; fi
}
prefix=$(mktemp -d "${TMPDIR:-/tmp}/profeed-install.XXXXXX")
trap 'rm -rf "$prefix"' EXIT
# The manifest is written in the build folder; keep the build's own.
manifest="$build/install_manifest.txt"
saved=""
[ -f "$manifest" ] && saved=$(mktemp) && cp "$manifest" "$saved"
cmake --install "$build" --prefix "$prefix" >"$prefix.log" 2>&1
rc=$?
cp "$manifest" "$prefix/manifest.txt" 2>/dev/null
if [ -n "$saved" ]; then mv "$saved" "$manifest"; else rm -f "$manifest"; fi
check "cmake --install --prefix works" [ "$rc" -eq 0 ]
outside=$(grep -v "^$prefix/" "$prefix/manifest.txt" 2>/dev/null)
check "every installed file is under the prefix${outside:+ (not: $(echo "$outside" | head -3 | tr '\n' ' '))}" \
  [ -z "$outside" ]
rm -f "$prefix.log"

"$prefix/bin/profeed" submit --local --language cuda -- kernels all >"$prefix/out.txt" 2>"$prefix/err.txt"
rc=$?
check "the installed profeed submit --local runs (exit $rc)" [ "$rc" -eq 0 ]
check "... replaying the map installed in the prefix" \
  grep -q "replaying recorded captures from $prefix/bin/../share/profeed/replay/h200.map" "$prefix/err.txt"
check "... and no file of the source tree" bash -c "! grep -q '$(cd "$(dirname "$0")/.." && pwd)/tests/fixtures' '$prefix/out.txt' '$prefix/err.txt'"
check "... with the feedback of the capture" grep -q "^1\. atomic_hist" "$prefix/out.txt"
exit $fail
