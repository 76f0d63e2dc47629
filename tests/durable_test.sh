#!/usr/bin/env bash
# The journaled broker's promises, one at a time (issue 7):
#  1. an agent that went away before its job finished gets the feedback when
#     it asks again by job id, after a kill -9 and restart of the broker, and
#     the job is not run again;
#  2. a job acknowledged while no collector was there survives a kill -9 of
#     the broker and completes once one registers;
#  3. past --max-queued, a new job is answered "busy, retry after" and the
#     agent submits it again on its own, telling the person so;
#  4. a state folder that cannot be written stops the broker at start with the
#     reason.
#
#   tests/durable_test.sh BUILD_DIR REPLAY_MAP
set -u
build=$1
map=$2
. "$(dirname "$0")/farm_lib.sh"
farm_scratch durable
profeed=$build/client/profeed
hb=(--heartbeat-ms 200 --liveness 3)

start_broker() { # start_broker AGENT_EP WORKER_EP [flags]
  local a=$1 w=$2
  shift 2
  farm_broker "$a" "$w" --state-dir "$dir/state" "$@"
}
restart_broker() { # restart_broker [flags]: kill -9, then the same ports and state
  kill -KILL "$broker_pid"
  wait "$broker_pid" 2>/dev/null
  start_broker "$agents" "$workers" "$@"
}
start_worker() { # start_worker collector|analyzer NAME [flags]
  local role=$1 name=$2
  shift 2
  if [ "$role" = collector ]; then
    "$build/collector/profeed-collector" --broker "$worker_ep" --worker-id "$name" --replay "$map" \
      "${hb[@]}" "$@" >>"$dir/$name.log" 2>&1 &
  else
    "$build/analyzer/profeed-analyzer" --broker "$worker_ep" --worker-id "$name" "${hb[@]}" "$@" \
      >>"$dir/$name.log" 2>&1 &
  fi
  pids+=("$!")
  eval "pid_$name=$!"
}
submit() { # submit OUT [flags] -- PROGRAM...: profeed submit in the foreground
  local out=$1
  shift
  "$profeed" submit --endpoint "$agent_ep" --language cuda --arch sm_90 "$@" >"$dir/$out.out" 2>"$dir/$out.err"
}
finished() { # finished JOB_ID: until the broker logs it finished
  for _ in $(seq 100); do grep -q "job $1: finished" "$dir/broker.log" && return 0; sleep 0.1; done
  return 1
}

# Fixed ports from outside the ephemeral range (farm_ports), the same for
# every restart; two more for the brokers that must refuse to start.
farm_ports durable 4
agents=tcp://127.0.0.1:${ports[0]} workers=tcp://127.0.0.1:${ports[1]}
start_broker "$agents" "$workers"
start_worker collector c1 --pass-delay-ms 700
start_worker analyzer a1
sleep 1

# 1. The agent gives up after 1 s; the job (3 passes of 700 ms) finishes
# without it; the broker dies and comes back; the agent asks again.
submit away --job-id durable-away --wait-s 1 -- kernels all
check "an agent that stops waiting gets no feedback yet" bash -c "! grep -q atomic_hist '$dir/away.out'"
check "the job finishes without its agent" finished durable-away
restart_broker
submit back --job-id durable-away --wait-s 10 -- kernels all
check "after a broker kill -9, asking again by job id gets the feedback" grep -q "^1\. atomic_hist" "$dir/back.out"
check "... without running the job again" \
  bash -c "[ \$(grep -c 'job durable-away: attempt' '$dir/broker.log') -eq 1 ]"

# 2. Acknowledged with no collector, broker killed, then a collector comes.
kill -KILL "$pid_c1"
wait "$pid_c1" 2>/dev/null
sleep 1
"$profeed" submit --endpoint "$agent_ep" --language cuda --arch sm_90 --job-id durable-queued --wait-s 60 \
  -- kernels all >"$dir/queued.out" 2>"$dir/queued.err" &
agent_pid=$!
for _ in $(seq 50); do grep -q "job durable-queued .*queued" "$dir/broker.log" && break; sleep 0.1; done
restart_broker
start_worker collector c2
wait "$agent_pid"
rc=$?
check "a job queued before a broker kill -9 completes when a collector comes" \
  bash -c "[ $rc -eq 0 ] && grep -q '^1\. atomic_hist' '$dir/queued.out'"
check "the restarted broker read it from its journal" grep -q "records read; 1 jobs queued" "$dir/broker.log"

# 3. Backpressure: one job may wait; the collector is slow.
restart_broker --max-queued 1
kill -KILL "$pid_c2"
wait "$pid_c2" 2>/dev/null
start_worker collector c3 --pass-delay-ms 700
sleep 1.5
for i in 1 2 3; do
  "$profeed" submit --endpoint "$agent_ep" --language cuda --arch sm_90 --job-id "durable-busy-$i" --wait-s 60 \
    -- kernels all >"$dir/busy$i.out" 2>"$dir/busy$i.err" &
  eval "busy_$i=$!"
done
rc=0
for i in 1 2 3; do eval "wait \$busy_$i" || rc=1; done
check "past --max-queued, jobs are refused as busy with a time to retry" \
  grep -q "refused: busy: 1 jobs are queued (the limit is 1); retry after" "$dir/broker.log"
resubmitted() { # a job refused as busy was queued later: the agent came back on its own
  local id
  for id in durable-busy-1 durable-busy-2 durable-busy-3; do
    grep -q "job $id refused: busy" "$dir/broker.log" &&
      sed -n "/job $id refused: busy/,\$p" "$dir/broker.log" | grep -q "job $id from agent .*: queued" && return 0
  done
  return 1
}
check "the agent submits a busy-refused job again on its own" resubmitted
check "every busy-refused job completes in the end" \
  bash -c "[ $rc -eq 0 ] && grep -q '^1\. atomic_hist' '$dir/busy1.out' && grep -q '^1\. atomic_hist' '$dir/busy2.out' &&
           grep -q '^1\. atomic_hist' '$dir/busy3.out'"

# 4. A state folder that cannot be written.
if [ "$(id -u)" -ne 0 ]; then
  mkdir -p "$dir/ro" && chmod 0500 "$dir/ro"
  "$build/broker/profeed-broker" --agents "tcp://127.0.0.1:${ports[2]}" --workers "tcp://127.0.0.1:${ports[3]}" \
    --state-dir "$dir/ro/state" >"$dir/ro.log" 2>&1
  rc=$?
  check "a state folder that cannot be written stops the broker with the reason" \
    bash -c "[ $rc -ne 0 ] && grep -q 'cannot use the state folder .*Permission denied' '$dir/ro.log'"
else
  : >"$dir/file"
  "$build/broker/profeed-broker" --agents "tcp://127.0.0.1:${ports[2]}" --workers "tcp://127.0.0.1:${ports[3]}" \
    --state-dir "$dir/file/state" >"$dir/ro.log" 2>&1
  rc=$?
  check "a state folder that cannot be made stops the broker with the reason" \
    bash -c "[ $rc -ne 0 ] && grep -q 'cannot use the state folder .*Not a directory' '$dir/ro.log'"
fi
exit "$fail"
