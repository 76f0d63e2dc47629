#!/usr/bin/env bash
# The project's test command (README, and .ci/run for CI). In order:
#   1. installs the build dependencies (deploy/install-deps.sh);
#   2. with $CC (gcc by default): AddressSanitizer + UBSan, warnings as errors,
#      asserts on; builds in $PROFEED_TEST_BUILD (build-test/) and runs ctest;
#   3. with the other compiler (clang after gcc, gcc after clang): no sanitizers,
#      warnings as errors, the default RelWithDebInfo flags (asserts off, as
#      users build it); builds in $PROFEED_OTHER_BUILD (build-clang/ or
#      build-gcc/) and runs ctest again;
#   4. with $CC again: ThreadSanitizer, the threaded farm tests only (ctest -L
#      tsan), in $PROFEED_TSAN_BUILD (build-tsan/); the banned-function check
#      (tests/banned_check.sh) runs as a ctest in passes 2 and 3.
# The first two passes run every test: without sanitizers the second is a few
# times faster than the first; the TSan pass builds only the farm's programs
# and runs six farm tests (about five minutes on 2 cores); all three stay
# well inside CI's 30 minutes. A step that fails is reported and the next pass still runs; the
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
tsan_dir=${PROFEED_TSAN_BUILD:-build-tsan}

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

# ThreadSanitizer: the threaded farm tests only (ctest -L tsan; the list and
# why it is that list: tests/CMakeLists.txt), with only the programs they
# start built. A process's reports go to files, not to the test's output (the
# farm scripts keep each process's log), so any report file fails the pass.
tsan_pass() {
  local label="thread sanitizer ($first_cc)" dir=$tsan_dir start=$SECONDS
  section "$label: configure with $first_cc in $dir/"
  if ! cmake -S . -B "$dir" -DCMAKE_C_COMPILER="$first_cc" -DPROFEED_WERROR=ON -DPROFEED_TSAN=ON \
       -DPROFEED_PYTHON=OFF -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O1 -g"; then
    failed+=("$label: configure"); return
  fi
  section "$label: build the farm's programs (-j$jobs)"
  if ! cmake --build "$dir" -j "$jobs" --target tsan_binaries; then
    failed+=("$label: build"); return
  fi
  section "$label: ctest -L tsan"
  rm -rf "$dir/tsan-reports" && mkdir -p "$dir/tsan-reports"
  local reports supp
  reports=$(cd "$dir/tsan-reports" && pwd) supp=$PWD/tests/tsan.supp
  if ! (cd "$dir" && TSAN_OPTIONS="suppressions=$supp second_deadlock_stack=1 log_path=$reports/tsan" \
        ctest -L tsan --output-on-failure); then
    failed+=("$label: tests")
  fi
  if compgen -G "$dir/tsan-reports/tsan*" >/dev/null; then
    grep -h -A40 '^WARNING: ThreadSanitizer' "$dir"/tsan-reports/tsan* | head -200
    grep -h '^SUMMARY' "$dir"/tsan-reports/tsan* | sort | uniq -c
    failed+=("$label: reports in $dir/tsan-reports/")
  fi
  printf '%s: %d s\n' "$label" $((SECONDS - start))
}
tsan_pass

section "summary"
if [ ${#failed[@]} -gt 0 ]; then
  printf 'FAILED: %s\n' "${failed[@]}"
  exit 1
fi
echo "all builds and tests passed ($first_cc sanitized, $other_cc plain, $first_cc thread-sanitized farm) in $SECONDS s"
