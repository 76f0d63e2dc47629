#!/usr/bin/env bash
# The project's test command (README, and .ci/run for CI). In order:
#   1. installs the build dependencies (deploy/install-deps.sh);
#   2. with $CC (gcc by default): AddressSanitizer + UBSan, warnings as errors,
#      asserts on; builds in $PROFEED_TEST_BUILD (build-test/) and runs ctest;
#   3. with the other compiler (clang after gcc, gcc after clang): no sanitizers,
#      warnings as errors, the default RelWithDebInfo flags (asserts off, as
#      users build it); builds in $PROFEED_OTHER_BUILD (build-clang/ or
#      build-gcc/) and runs ctest again.
# Both passes run the tests: without sanitizers the second is a few times faster
# than the first, and the two together stay well inside CI's ~20 minutes on
# 2 cores. A step that fails is reported and the next pass still runs; the
# script exits non-zero if anything failed.
set -euo pipefail
cd "$(dirname "$0")/.."

jobs=$(nproc 2>/dev/null || echo 2)
first_cc=${CC:-gcc}
case "$(basename "$first_cc")" in
  clang*) other_cc=gcc ;;
  *) other_cc=clang ;;
esac
first_dir=${PROFEED_TEST_BUILD:-build-test}
other_dir=${PROFEED_OTHER_BUILD:-build-$other_cc}

# Sanitizer reports stop the process, with a stack trace; leaks count.
export ASAN_OPTIONS=${ASAN_OPTIONS:-halt_on_error=1:detect_leaks=1:print_stacktrace=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}

section() { printf '\n========== %s ==========\n' "$*"; }
failed=()

# build_and_test LABEL DIR CC CMAKE-ARGS...: configure, build, ctest; records
# the first failing step under LABEL.
build_and_test() {
  local label=$1 dir=$2 cc=$3
  shift 3
  local start=$SECONDS
  section "$label: configure with $cc in $dir/"
  if ! cmake -S . -B "$dir" -DCMAKE_C_COMPILER="$cc" -DPROFEED_WERROR=ON "$@"; then
    failed+=("$label: configure"); return
  fi
  section "$label: build (-j$jobs)"
  if ! cmake --build "$dir" -j "$jobs"; then
    failed+=("$label: build"); return
  fi
  section "$label: ctest"
  if ! (cd "$dir" && ctest --output-on-failure); then
    failed+=("$label: tests")
  fi
  printf '%s: %d s\n' "$label" $((SECONDS - start))
}

section "dependencies"
bash deploy/install-deps.sh

# -O2 without -DNDEBUG: optimised (gcc's -O2-only warnings fire, ASan is fast)
# with asserts kept.
build_and_test "sanitized ($first_cc)" "$first_dir" "$first_cc" \
  -DPROFEED_SANITIZE=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O2 -g"

build_and_test "plain ($other_cc)" "$other_dir" "$other_cc" \
  -DPROFEED_SANITIZE=OFF -DCMAKE_BUILD_TYPE=RelWithDebInfo

section "summary"
if [ ${#failed[@]} -gt 0 ]; then
  printf 'FAILED: %s\n' "${failed[@]}"
  exit 1
fi
echo "all builds and tests passed ($first_cc sanitized, $other_cc plain) in $SECONDS s"
