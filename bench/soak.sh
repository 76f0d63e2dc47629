#!/usr/bin/env bash
# A bounded soak (issue 7): jobs at a steady rate through a journaled broker,
# two replay collectors and two analyzers for DURATION seconds (default 600),
# while one of the three kinds of process is killed with SIGKILL and restarted
# every 20-40 s. Reports jobs completed, lost (failed or never answered: must
# be 0), duplicated (second deliveries that reached an agent, which the client
# library drops: reported), p99 latency, and the broker's memory at the start
# and the end (the broker that runs at that moment; restarts are counted).
#
#   cmake -S . -B build -DCMAKE_BUILD_TYPE=Release && cmake --build build
#   bench/soak.sh                       # 10 minutes
#   bench/soak.sh --duration 120        # shorter
#   bench/soak.sh --rate 20 --seed 7    # jobs per second, and the kill schedule's seed
set -uo pipefail
cd "$(dirname "$0")/.."
build=${PROFEED_BUILD:-build}
duration=600
rate=20
seed=$(date +%s)
while [ $# -gt 0 ]; do
  case $1 in
    --duration) duration=$2; shift ;;
    --rate) rate=$2; shift ;;
    --seed) seed=$2; shift ;;
    -h|--help) sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "soak.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
  shift
done
for b in broker/profeed-broker collector/profeed-collector analyzer/profeed-analyzer bench/farm_load; do
  [ -x "$build/$b" ] || { echo "soak.sh: $build/$b is missing; build first (see --help)" >&2; exit 1; }
done
RANDOM=$seed
map=tests/fixtures/replay/h200.map
dir=$(mktemp -d /tmp/profeed-soak.XXXXXX)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill -KILL "$p" 2>/dev/null; done
  wait 2>/dev/null
  echo "logs: $dir"
}
trap cleanup EXIT
say() { printf '%s\n' "$*" | tee -a "$dir/summary.txt"; }
rss_kb() { awk '/VmRSS/ {print $2}' "/proc/$1/status" 2>/dev/null || echo "?"; }

hb=(--heartbeat-ms 250 --liveness 3)
start_broker() {
  rm -f "$dir/endpoints"
  "$build/broker/profeed-broker" --agents "$1" --workers "$2" --endpoints-file "$dir/endpoints" \
    --state-dir "$dir/state" --max-attempts 50 "${hb[@]}" --log-level warn >>"$dir/broker.log" 2>&1 &
  broker_pid=$!
  pids+=("$broker_pid")
  for _ in $(seq 200); do [ -s "$dir/endpoints" ] && break; sleep 0.05; done
  agent_ep=$(sed -n 's/^agent=//p' "$dir/endpoints")
  worker_ep=$(sed -n 's/^worker=//p' "$dir/endpoints")
}
start_worker() { # start_worker collector|analyzer NAME
  if [ "$1" = collector ]; then
    "$build/collector/profeed-collector" --broker "$worker_ep" --worker-id "$2" --replay "$map" --slots 8 \
      --pass-delay-ms 50 "${hb[@]}" --log-level warn >>"$dir/$2.log" 2>&1 &
  else
    "$build/analyzer/profeed-analyzer" --broker "$worker_ep" --worker-id "$2" "${hb[@]}" --log-level warn \
      >>"$dir/$2.log" 2>&1 &
  fi
  pids+=("$!")
  eval "pid_$2=$!"
}

start_broker "tcp://127.0.0.1:*" "tcp://127.0.0.1:*"
start_worker collector c1
start_worker collector c2
start_worker analyzer a1
start_worker analyzer a2
sleep 1
agents=4
interval=$((1000 * agents / rate))
jobs=$((duration * rate / agents))
say "# bench/soak.sh, $(date -u '+%Y-%m-%d %H:%M UTC'), seed $seed"
say "machine: $(nproc) cores, Linux $(uname -r); $build; tree $(git rev-parse --short HEAD 2>/dev/null || echo '?')"
say "load: $agents agents x $jobs jobs of \`kernels all\` (3 passes, 50 ms each), one every $interval ms per agent ($rate jobs/s), for about ${duration}s"
rss_start=$(rss_kb "$broker_pid")
"$build/bench/farm_load" --endpoint "$agent_ep" --agents "$agents" --jobs "$jobs" --warmup 0 --wait-s 600 \
  --interval-ms "$interval" --expect "1. atomic_hist" --latencies "$dir/latencies.txt" -- kernels all \
  >"$dir/load.out" 2>"$dir/load.err" &
load_pid=$!

kills=0
restarts=0
while kill -0 "$load_pid" 2>/dev/null; do
  for _ in $(seq $((20 + RANDOM % 21))); do kill -0 "$load_pid" 2>/dev/null || break 2; sleep 1; done
  case $((RANDOM % 3)) in
  0)
    kill -KILL "$broker_pid"; wait "$broker_pid" 2>/dev/null
    start_broker "$agent_ep" "$worker_ep"
    restarts=$((restarts + 1)); what=broker ;;
  1)
    name=c$((1 + RANDOM % 2)); eval "kill -KILL \$pid_$name; wait \$pid_$name 2>/dev/null"
    start_worker collector "$name"; what="collector $name" ;;
  2)
    name=a$((1 + RANDOM % 2)); eval "kill -KILL \$pid_$name; wait \$pid_$name 2>/dev/null"
    start_worker analyzer "$name"; what="analyzer $name" ;;
  esac
  kills=$((kills + 1))
  echo "$(date -u +%T) killed and restarted the $what" >>"$dir/kills.txt"
done
wait "$load_pid"
rss_end=$(rss_kb "$broker_pid")
line=$(grep '^jobs=' "$dir/load.out")
strays=$(sed -n 's/^strays=//p' "$dir/load.out")
ok=$(sed -n 's/.* ok=\([0-9]*\).*/\1/p' <<<"$line")
p99=$(sed -n 's/.*p99_ms=\([0-9.]*\).*/\1/p' <<<"$line")
p50=$(sed -n 's/.*p50_ms=\([0-9.]*\).*/\1/p' <<<"$line")
lost=$((jobs * agents - ${ok:-0}))
say "kills: $kills ($restarts of the broker)"
say "jobs: $((jobs * agents)) submitted, ${ok:-0} completed with the right feedback, lost $lost [must be 0]"
say "duplicated: ${strays:-?} second deliveries reached an agent (dropped by the client library)"
say "latency: p50 $p50 ms, p99 $p99 ms (kills included)"
say "broker RSS: $rss_start KiB at the start, $rss_end KiB at the end (after $restarts restarts)"
[ "$lost" -eq 0 ] || { cat "$dir/load.err"; exit 1; }
