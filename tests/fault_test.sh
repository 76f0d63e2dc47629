#!/usr/bin/env bash
# Fault injection (issue 7): JOBS jobs (default 200) through a broker with a
# journal, two replay collectors and two analyzers, while the broker, a
# collector and an analyzer are each killed with SIGKILL and restarted at
# random moments. Every job must come back to its agent once, with the
# feedback of its capture (farm_load --expect), none failed.
#
#   tests/fault_test.sh BUILD_DIR REPLAY_MAP [JOBS] [SEED]
#
# The kill moments come from SEED (default: the time); the seed is printed so
# a failure can be replayed.
set -u
build=$1
map=$2
jobs=${3:-200}
seed=${4:-$(date +%s)}
RANDOM=$seed
. "$(dirname "$0")/farm_lib.sh"
farm_scratch_kept fault
echo "# seed $seed, $jobs jobs, scratch $dir"

hb=(--heartbeat-ms 200 --liveness 3)
start_broker() { # start_broker AGENT_EP WORKER_EP
  farm_broker "$1" "$2" --state-dir "$dir/state" --max-attempts 20 --log-level info
}
start_collector() { # start_collector NAME
  "$build/collector/profeed-collector" --broker "$worker_ep" --worker-id "$1" --replay "$map" --slots 4 \
    --pass-delay-ms 100 "${hb[@]}" >>"$dir/$1.log" 2>&1 &
  pids+=("$!")
  eval "pid_$1=$!"
}
start_analyzer() { # start_analyzer NAME
  "$build/analyzer/profeed-analyzer" --broker "$worker_ep" --worker-id "$1" "${hb[@]}" >>"$dir/$1.log" 2>&1 &
  pids+=("$!")
  eval "pid_$1=$!"
}
kill_hard() { # kill_hard PID
  kill -KILL "$1" 2>/dev/null
  wait "$1" 2>/dev/null
}

# Fixed ports from outside the ephemeral range (farm_ports): every restart
# binds the same two again.
farm_ports fault 2
agents=tcp://127.0.0.1:${ports[0]} workers=tcp://127.0.0.1:${ports[1]}
start_broker "$agents" "$workers"
start_collector c1
start_collector c2
start_analyzer a1
start_analyzer a2

# Four agents; the three-pass capture, whose feedback names atomic_hist first.
"$build/bench/farm_load" --endpoint "$agent_ep" --agents 4 --jobs $((jobs / 4)) --warmup 0 --wait-s 300 \
  --expect "1. atomic_hist" -- kernels all >"$dir/load.out" 2>"$dir/load.err" &
load_pid=$!
pids+=("$load_pid")
# Any part gone on its own (a restart that did not come up) ends the test at
# once: the load would only wait out its --wait-s.
all_alive() {
  farm_alive "$broker_pid" broker
  local name
  for name in c1 c2 a1 a2; do eval "farm_alive \$pid_$name $name"; done
}

# Kill one part every 0.7 to 2.2 s while the load runs, each kind at least
# twice, in a random order.
kills=0
victims=(broker collector analyzer broker collector analyzer)
while kill -0 "$load_pid" 2>/dev/null && [ "$kills" -lt 12 ]; do
  sleep "$(printf '0.%d' $((7 + RANDOM % 9)))"
  [ $((RANDOM % 3)) -eq 0 ] && sleep 0.6
  kill -0 "$load_pid" 2>/dev/null || break
  all_alive
  if [ "$kills" -lt ${#victims[@]} ]; then victim=${victims[$kills]}; else victim=${victims[$((RANDOM % 3))]}; fi
  case $victim in
  broker)
    kill_hard "$broker_pid"
    sleep "0.$((RANDOM % 5))"
    start_broker "$agents" "$workers"
    ;;
  collector)
    name=c$((1 + RANDOM % 2))
    eval "kill_hard \$pid_$name"
    start_collector "$name"
    ;;
  analyzer)
    name=a$((1 + RANDOM % 2))
    eval "kill_hard \$pid_$name"
    start_analyzer "$name"
    ;;
  esac
  kills=$((kills + 1))
  echo "# $(date +%T.%N | cut -c1-12) killed and restarted the $victim ($kills)"
done

while kill -0 "$load_pid" 2>/dev/null; do
  all_alive
  sleep 0.2
done
wait "$load_pid"
rc=$?
cat "$dir/load.out"
check "every job came back with its feedback ($jobs, after $kills kills)" \
  bash -c "[ $rc -eq 0 ] && grep -q '^jobs=$jobs ok=$jobs failed=0' '$dir/load.out'"
[ "$rc" -eq 0 ] || cat "$dir/load.err"
check "the broker, a collector and an analyzer were each killed" \
  bash -c "[ $kills -ge 3 ]"
check "the restarted broker read its journal" grep -q "records read" "$dir/broker.log"
exit "$fail"
