#!/usr/bin/env bash
# One feedback per job at the caller (issue 15, defect 8): the client library
# against a stand-in broker that delivers every Feedback twice and again for
# every heartbeat naming the job (tests/dup_broker.c). 40 jobs on one handle:
# each call must return its own job's feedback, exactly once; the second
# deliveries are dropped (counted as strays) and acknowledged each time.
#
#   tests/dup_test.sh BUILD_DIR
set -u
build=$1
. "$(dirname "$0")/farm_lib.sh"
farm_scratch dups
"$build/tests/dup_broker" "ipc://$dir/agents" >"$dir/broker.log" 2>&1 &
broker_pid=$!
pids+=("$broker_pid")
sleep 0.3
"$build/tests/farm_dups" "ipc://$dir/agents" 40 >"$dir/dups.out" 2>"$dir/dups.err"
rc=$?
cat "$dir/dups.out"
kill -TERM "$broker_pid"
wait "$broker_pid" 2>/dev/null
check "each of 40 calls returned its own job's feedback, once" \
  bash -c "[ $rc -eq 0 ] && grep -q '^jobs=40 own=40 ' '$dir/dups.out'"
strays=$(sed -n 's/.*strays=//p' "$dir/dups.out")
check "the duplicates reached the handle and were dropped (${strays:-?} strays)" [ "${strays:-0}" -ge 39 ]
check "every feedback was acknowledged" bash -c "[ \$(sed -n 's/^acks //p' '$dir/broker.log') -ge 39 ]"
[ "$rc" -eq 0 ] || cat "$dir/dups.err"
exit "$fail"
