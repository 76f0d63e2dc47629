#!/usr/bin/env bash
# The Python package's tests (python/tests), run against the package as
# `cmake --install` lays it out: installed under a DESTDIR in the build tree,
# found by Debian's python3 through that dist-packages folder, and finding the
# C library beside it, never in the source tree.
# Usage: python_test.sh BUILD_DIR PYTHON PACKAGE_DIR TEST_DIR [pytest args]
set -euo pipefail
build=$(cd "$1" && pwd) python=$2 pkgdir=$3 tests=$(cd "$4" && pwd)
shift 4
root=$build/python-root
rm -rf "$root"
DESTDIR=$root cmake --install "$build" >"$build/python-install.log" 2>&1 ||
  { cat "$build/python-install.log"; echo "FAIL - cmake --install into $root"; exit 1; }
for mod in pytest zmq google.protobuf; do
  "$python" -c "import $mod" 2>/dev/null ||
    { echo "FAIL - $python cannot import $mod: run deploy/install-deps.sh"; exit 1; }
done
export PYTHONPATH=$root$pkgdir
export PROFEED_TEST_ROOT=$root PROFEED_TEST_BUILD=$build
export PROFEED_FIXTURES
PROFEED_FIXTURES=$(cd "$(dirname "$0")" && pwd)/fixtures
unset PROFEED_LIBRARY
# A sanitized build: python3 is not, so the runtimes go first into it (and
# into the node and python3 processes the MCP test starts); CPython's own
# allocations at exit are not leaks of ours.
if [ -n "${PROFEED_SANITIZER_CC:-}" ]; then
  preload=
  for rt in libasan.so libubsan.so libclang_rt.asan-x86_64.so libclang_rt.ubsan_standalone-x86_64.so; do
    f=$("$PROFEED_SANITIZER_CC" -print-file-name="$rt" 2>/dev/null || true)
    [ -n "$f" ] && [ "$f" != "$rt" ] && [ -e "$f" ] && preload="$preload${preload:+:}$(readlink -f "$f")"
  done
  export LD_PRELOAD=$preload
  export ASAN_OPTIONS=${ASAN_OPTIONS:-halt_on_error=1}:detect_leaks=0
fi
export PYTHONDONTWRITEBYTECODE=1 # nothing written into the source tree
cd "$build"
exec "$python" -m pytest -q -p no:cacheprovider "$tests" "$@"
