#!/usr/bin/env bash
# Chaos (issue 15): JOBS jobs (default 400) from 8 agents through a journaled
# broker, two replay collectors of 4 slots and two analyzers, while a random
# one of them (the broker included) is killed with SIGKILL and restarted
# every 0.4 to 1.3 s for as long as the load runs. Every job must come back
# to its agent with the feedback of its capture (farm_load --expect: none
# lost, none failed, none wrong), each agent call returning one feedback, its
# own (second deliveries the broker sends are counted as strays and never
# returned), within the time limit.
#
#   tests/chaos_test.sh BUILD_DIR REPLAY_MAP [JOBS] [SEED]
#
# The kills come from SEED (default: the time), printed so that a failure can
# be replayed. Endpoints are ipc:// in the scratch folder: restarts reuse
# them, and no TCP port is taken.
set -u
build=$1
map=$2
jobs=${3:-400}
seed=${4:-$(date +%s)}
RANDOM=$seed
. "$(dirname "$0")/farm_lib.sh"
farm_scratch_kept chaos
echo "# seed $seed, $jobs jobs, scratch $dir"

hb=(--heartbeat-ms 200 --liveness 3)
agents_ep="ipc://$dir/agents"
workers_ep="ipc://$dir/workers"
start_broker() {
  farm_broker "$agents_ep" "$workers_ep" --state-dir "$dir/state" --max-attempts 20 --log-level info
}
start_worker() { # start_worker NAME: c* collectors, a* analyzers
  if [ "${1:0:1}" = c ]; then
    "$build/collector/profeed-collector" --broker "$workers_ep" --worker-id "$1" --replay "$map" --slots 4 \
      --pass-delay-ms 150 "${hb[@]}" >>"$dir/$1.log" 2>&1 &
  else
    "$build/analyzer/profeed-analyzer" --broker "$workers_ep" --worker-id "$1" "${hb[@]}" >>"$dir/$1.log" 2>&1 &
  fi
  pids+=("$!")
  eval "pid_$1=$!"
}
kill_hard() { # kill_hard PID
  kill -KILL "$1" 2>/dev/null
  wait "$1" 2>/dev/null
}

start_broker
[ -n "$agent_ep" ] || { echo "FAIL - the broker did not start"; fail=1; exit 1; }
for w in c1 c2 a1 a2; do start_worker "$w"; done

started=$(date +%s)
"$build/bench/farm_load" --endpoint "$agents_ep" --agents 8 --jobs $((jobs / 8)) --warmup 0 --wait-s 100 \
  --expect "1. atomic_hist" -- kernels all >"$dir/load.out" 2>"$dir/load.err" &
load_pid=$!

kills=0
declare -A killed=()
while kill -0 "$load_pid" 2>/dev/null; do
  sleep "$(printf '0.%d' $((4 + RANDOM % 6)))"
  [ $((RANDOM % 3)) -eq 0 ] && sleep 0.4
  kill -0 "$load_pid" 2>/dev/null || break
  # The first three kills are one of each kind; then any.
  case $((kills < 3 ? kills : RANDOM % 5)) in
  0 | 3)
    kill_hard "$broker_pid"
    sleep "0.$((RANDOM % 4))"
    start_broker
    victim=broker
    ;;
  1 | 4) victim=c$((1 + RANDOM % 2)) ;;
  *) victim=a$((1 + RANDOM % 2)) ;;
  esac
  if [ "$victim" != broker ]; then
    eval "kill_hard \$pid_$victim"
    start_worker "$victim"
  fi
  killed[${victim:0:1}]=1
  kills=$((kills + 1))
done
wait "$load_pid"
rc=$?
took=$(($(date +%s) - started))
cat "$dir/load.out"
echo "# $kills kills in ${took} s"
check "every job came back with the feedback of its capture ($jobs, after $kills kills)" \
  bash -c "[ $rc -eq 0 ] && grep -q '^jobs=$jobs ok=$jobs failed=0' '$dir/load.out'"
[ "$rc" -eq 0 ] || cat "$dir/load.err"
check "the broker, a collector and an analyzer were each killed" \
  bash -c "[ -n '${killed[b]:-}' ] && [ -n '${killed[c]:-}' ] && [ -n '${killed[a]:-}' ]"
check "no job failed at the broker" bash -c "! grep -q ': failed: ' '$dir/broker.log'"
check "within two minutes" [ "$took" -lt 120 ]
exit "$fail"
