#!/usr/bin/env bash
# Tests clean up after themselves (issue 16): cleanup_test.sh BUILD_DIR
#
# Runs the suites that write scratch files, each with a /tmp of its own (a
# private mount namespace with a tmpfs on /tmp, where unshare works: as root,
# or with user namespaces), and fails when the suite left anything there.
# test_config once left 34 files per run. Where no namespace can be made the
# suites get TMPDIR set to an empty folder instead, which catches only what
# honours TMPDIR.
set -uo pipefail
build=$(cd "$1" && pwd)
fail=0
scratch="$build/tests/cleanup-scratch"
rm -rf "$scratch"
mkdir -p "$scratch"
trap 'rm -rf "$scratch"' EXIT

private_tmp=0
case "$build" in
/tmp/*) ;; # a tmpfs on /tmp would hide the build itself
*)
  if unshare -m true 2>/dev/null; then
    private_tmp=1
    ns=(unshare -m)
  elif unshare -rm true 2>/dev/null; then
    private_tmp=1
    ns=(unshare -rm)
  fi
  ;;
esac

for suite in test_config test_cli test_wire_curve test_broker_auth test_broker_http test_collector; do
  log="$scratch/$suite.log"
  left="$scratch/$suite.left"
  if [ "$private_tmp" -eq 1 ]; then
    "${ns[@]}" bash -c 'mount -t tmpfs profeed-cleanup /tmp || exit 99
      env -u TMPDIR "$1" --jobs 2 >"$2" 2>&1; rc=$?
      ls -A /tmp >"$3"; exit $rc' _ "$build/tests/$suite" "$log" "$left"
    rc=$?
    where="its private /tmp"
  else
    mkdir "$scratch/$suite"
    TMPDIR="$scratch/$suite" "$build/tests/$suite" --jobs 2 >"$log" 2>&1
    rc=$?
    ls -A "$scratch/$suite" >"$left"
    where="TMPDIR (no mount namespace here)"
  fi
  if [ "$rc" -ne 0 ]; then
    echo "FAIL - $suite exited $rc:"
    tail -20 "$log"
    fail=1
  fi
  if [ -s "$left" ]; then
    echo "FAIL - $suite left $(wc -l <"$left") files in $where: $(head -5 "$left" | tr '\n' ' ')"
    fail=1
  else
    echo "ok   - $suite leaves nothing in $where"
  fi
done
exit $fail
