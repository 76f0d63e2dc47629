#!/usr/bin/env bash
# Busy counts across a broker restart (issue 15, defect 1). A collector with
# one slot runs a long job when the broker (no journal) is killed and
# restarted under it; the collector registers again while its slot is still
# full. A second job submitted then must wait for the slot, not be sent into
# it, refused as OVERLOADED and counted as failed attempts until none are
# left (FAILED_AFTER_RETRIES within a millisecond, as the broker did). The
# first job, resubmitted by its agent, is taken over from the collector's run.
#
#   tests/restart_busy_test.sh BUILD_DIR REPLAY_MAP
set -u
build=$1
map=$2
. "$(dirname "$0")/farm_lib.sh"
farm_scratch restart-busy
profeed=$build/client/profeed
hb=(--heartbeat-ms 200 --liveness 5)

start_broker() {
  farm_broker "ipc://$dir/agents" "ipc://$dir/workers" --max-attempts 5 --log-level info
}
submit() { # submit NAME: profeed submit of job restart-NAME in the background
  "$profeed" submit --endpoint "ipc://$dir/agents" --language cuda --arch sm_90 --job-id "restart-$1" --wait-s 40 \
    -- kernels all >"$dir/$1.out" 2>"$dir/$1.err" &
  eval "agent_$1=$!"
}
start_broker
[ -n "$agent_ep" ] || { echo "FAIL - the broker did not start"; fail=1; exit 1; }
# Three passes of 1.5 s: the first job holds the slot for 4.5 s.
"$build/collector/profeed-collector" --broker "$worker_ep" --worker-id c1 --replay "$map" --slots 1 \
  --pass-delay-ms 1500 "${hb[@]}" >>"$dir/c1.log" 2>&1 &
pids+=("$!")
"$build/analyzer/profeed-analyzer" --broker "$worker_ep" --worker-id a1 "${hb[@]}" >>"$dir/a1.log" 2>&1 &
pids+=("$!")
sleep 1
submit first
for _ in $(seq 50); do grep -q "job restart-first: attempt 1 started" "$dir/c1.log" && break; sleep 0.1; done
sleep 0.3
kill -KILL "$broker_pid"
wait "$broker_pid" 2>/dev/null
start_broker
# The collector hears of the restart at its next send and registers again.
for _ in $(seq 50); do [ "$(grep -c "worker c1 .* ready" "$dir/broker.log")" -ge 2 ] && break; sleep 0.1; done
submit second
rc=0
wait "$agent_first" || rc=1
wait "$agent_second" || rc=1
check "a job submitted while the collector's slot is still full waits and completes" \
  grep -q "^1\. atomic_hist" "$dir/second.out"
check "... without failed attempts" bash -c "! grep -q 'job restart-second: failed' '$dir/broker.log'"
check "the job running across the restart completes too" grep -q "^1\. atomic_hist" "$dir/first.out"
check "both agents exit 0" bash -c "[ $rc -eq 0 ]"
exit "$fail"
