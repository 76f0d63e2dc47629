#!/usr/bin/env bash
# A job submitted just after the broker lost its only collector is queued for
# the collector's return, not refused (issue 15): a pause of the broker's loop
# longer than the liveness window (a compaction, a slow fsync) loses every
# worker at once though they are alive, and they re-register within
# milliseconds. Here the collector itself is stopped (SIGSTOP) until the broker
# has dropped it, so the order is certain: lost, then the submission, then the
# collector back (SIGCONT). A collector that does not come back: the job is
# refused when the window for its return ends, and after it at once.
#
#   tests/rejoin_test.sh BUILD_DIR REPLAY_MAP
set -u
build=$1
map=$2
. "$(dirname "$0")/farm_lib.sh"
farm_scratch rejoin
hb=(--heartbeat-ms 200 --liveness 3)
profeed=$build/client/profeed
farm_broker "ipc://$dir/agents" "ipc://$dir/workers"
[ -n "$agent_ep" ] || { echo "FAIL - the broker did not start"; fail=1; exit 1; }
"$build/collector/profeed-collector" --broker "$worker_ep" --worker-id c1 --replay "$map" "${hb[@]}" \
  >>"$dir/c1.log" 2>&1 &
collector=$!
pids+=("$collector")
"$build/analyzer/profeed-analyzer" --broker "$worker_ep" --worker-id a1 "${hb[@]}" >>"$dir/a1.log" 2>&1 &
pids+=("$!")
registered() { # registered N: the broker's log says the collector registered N times
  local _
  for _ in $(seq 100); do
    [ "$(grep -c 'worker c1 (peer [^)]*) ready' "$dir/broker.log")" -ge "$1" ] && return 0
    sleep 0.1
  done
  return 1
}
lost() { # lost N: the broker's log says a worker was lost N times
  local _
  for _ in $(seq 100); do
    [ "$(grep -c 'worker c1 (collector, peer [^)]*) lost' "$dir/broker.log")" -ge "$1" ] && return 0
    sleep 0.1
  done
  return 1
}
submit() { # submit NAME: one job, its output in $dir/NAME.out and .err, rc in $rc
  "$profeed" submit --endpoint "$agent_ep" --language cuda --arch sm_90 --wait-s 30 -- full \
    >"$dir/$1.out" 2>"$dir/$1.err"
  rc=$?
}
check "the collector registers" registered 1
sleep 2.5 # past the start-up grace (2 x 200 ms x 3 + 1 s) that alone queued such jobs before
kill -STOP "$collector"
check "the stopped collector is lost to the broker" lost 1
submit queued &
sub=$!
sleep 0.5
kill -CONT "$collector"
wait "$sub"
check "a job submitted right after the loss waits for the collector and gets its feedback" \
  grep -q "1\. " "$dir/queued.out"
check "... and was not refused" bash -c "! grep -q 'no collector' '$dir/queued.err'"
# A collector that is gone: a job submitted after its loss is queued while it
# may still come back (200 ms x (3 + 32) + 1 s = 8 s), then refused, saying why;
# after that window a job is refused at once.
kill -TERM "$collector"
wait "$collector" 2>/dev/null
check "the collector that left is lost" lost 2
start=$(date +%s%N)
submit waited
took=$((($(date +%s%N) - start) / 1000000))
check "with the collector gone, a job is refused when the window for its return ends (${took} ms)" \
  bash -c "[ $rc -ne 0 ] && [ $took -ge 5000 ] && [ $took -lt 15000 ] && grep -q 'no collector is registered' '$dir/waited.err'"
start=$(date +%s%N)
submit refused
took=$((($(date +%s%N) - start) / 1000000))
check "after that window, a job is refused at once (${took} ms)" \
  bash -c "[ $rc -ne 0 ] && [ $took -lt 3000 ] && grep -q 'no collector is registered' '$dir/refused.err'"
exit "$fail"
