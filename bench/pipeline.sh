#!/usr/bin/env bash
# The farm's pipeline benchmark (issue 5), run by hand, never by ctest:
#
#   bench/pipeline.sh [--quick] [--runs R] [--runs-large L] [--agents N] [--jobs M] [--keep] [--large-only | --no-large]
#
# In one run, on this machine:
#   1. messaging floor: libzmq's plain DEALER <-> ROUTER round trip over TCP
#      loopback (bench/zmq_rtt), 64 bytes and the size of one `full` pass;
#   2. analysis floor: the same captures analyzed in one process, per job
#      (bench/farm_load --analyze: profeed_analyze_files() in a loop), and the
#      wall time of one `profeed analyze` process per job for comparison;
#   3. latency: one agent, one job at a time, through profeed-broker, one
#      replay profeed-collector and one profeed-analyzer (separate processes on
#      loopback): p50/p99 end to end; overhead = farm p50 - analysis floor p50,
#      the floor measured again right before each farm run;
#      for `nokernel` (a 1 KB pass, nothing to analyze), `kernels all` (three
#      passes, 125 KB) and `full` (one pass, 512 KB);
#   4. throughput: N agents x M jobs of the `full` capture (analysis-bound:
#      one 512 KB pass, ~3 ms of analysis) through one broker, two replay
#      collectors and K = 1, then K = 2 analyzers: jobs/s, p50/p99, and the
#      broker's CPU time (utime + stime from /proc/<pid>/stat over the run);
#   5. large captures (issue 20): generated `--set full` captures of 2,000
#      (82 MB) and 20,000 (820 MB) launches (bench/gen_launches.py) through
#      one broker, one replay collector and one analyzer, streamed in zstd
#      chunks: end to end against `profeed analyze` on the same files plus the
#      libzmq transfer floor of the compressed bytes (chunks x the round trip
#      of one chunk-sized message: each chunk crosses two hops, collector ->
#      broker -> analyzer), the compression ratio, and each process's peak
#      RSS growth (VmHWM). --large-only runs just this part, --no-large skips it.
# Each measurement is repeated R times (default 5; --quick: 3) and the median
# run is reported. Agents are threads of bench/farm_load on libprofeed-client,
# each with its own connection, so process start is not in the numbers.
#
# Needs a Release build in build/ (or $PROFEED_BUILD):
#   cmake -S . -B build -DCMAKE_BUILD_TYPE=Release && cmake --build build -j"$(nproc)"
set -euo pipefail
cd "$(dirname "$0")/.."

build=${PROFEED_BUILD:-build}
map=tests/fixtures/replay/h200.map
h200=tests/fixtures/ncu/h200
runs=5
agents=4
jobs=150
lat_jobs=200
keep=0
large=1
only_large=0
runs_large=2 # the 820 MB job: at most this many runs (--runs-large)
while [ $# -gt 0 ]; do
  case $1 in
    --quick) runs=3; jobs=60; lat_jobs=100 ;;
    --runs) runs=$2; shift ;;
    --runs-large) runs_large=$2; shift ;;
    --agents) agents=$2; shift ;;
    --jobs) jobs=$2; shift ;;
    --keep) keep=1 ;;
    --large-only) only_large=1 ;;
    --no-large) large=0 ;;
    -h|--help) sed -n '2,32p' "$0"; exit 0 ;;
    *) echo "pipeline.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
  shift
done

bins=("$build/broker/profeed-broker" "$build/collector/profeed-collector" "$build/analyzer/profeed-analyzer"
      "$build/client/profeed" "$build/bench/farm_load" "$build/bench/zmq_rtt")
for b in "${bins[@]}"; do
  if [ ! -x "$b" ]; then
    echo "pipeline.sh: $b is missing; build first:" >&2
    echo "  cmake -S . -B $build -DCMAKE_BUILD_TYPE=Release && cmake --build $build -j\"\$(nproc)\"" >&2
    exit 1
  fi
done
build_type=$(sed -n 's/^CMAKE_BUILD_TYPE:STRING=//p' "$build/CMakeCache.txt" 2>/dev/null || true)
[ "$build_type" = Release ] || echo "pipeline.sh: warning: $build is a '$build_type' build, not Release" >&2

tmp=$(mktemp -d "${TMPDIR:-/tmp}/profeed-pipeline.XXXXXX")
pids=()
stop_farm() {
  local pid
  for pid in "${pids[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  pids=()
}
on_exit() {
  local rc=$?
  stop_farm
  if [ "$keep" -eq 1 ] || [ "$rc" -ne 0 ]; then
    echo "pipeline.sh: logs and raw results in $tmp" >&2
  else
    rm -rf "$tmp"
  fi
}
trap on_exit EXIT
trap 'exit 130' INT TERM

clk_tck=$(getconf CLK_TCK)
# CPU seconds (user + system) a process has used: fields 14 and 15 of
# /proc/PID/stat, counted after the ") " that ends the command name.
cpu_s() { sed 's/.*) //' "/proc/$1/stat" | awk -v hz="$clk_tck" '{printf "%.3f", ($12 + $13) / hz}'; }
field() { sed -n "s/\(^\|.* \)$1=\([^ ]*\).*/\2/p"; } # field KEY < "k=v k=v" line
median() { sort -g | awk '{v[NR]=$1} END {print v[int((NR + 1) / 2)]}'; }

# start_farm COLLECTORS ANALYZERS: a fresh broker on free loopback ports and
# its workers, logging warnings only (info lines per job would be measured).
start_farm() { # start_farm COLLECTORS ANALYZERS [BROKER FLAGS...]
  local c=$1 k=$2 i n
  shift 2
  rm -f "$tmp/endpoints"
  "$build/broker/profeed-broker" --agents 'tcp://127.0.0.1:*' --workers 'tcp://127.0.0.1:*' \
    --endpoints-file "$tmp/endpoints" --log-level warn "$@" 2>>"$tmp/broker.log" &
  broker_pid=$!
  pids+=("$broker_pid")
  for _ in $(seq 100); do [ -s "$tmp/endpoints" ] && break; sleep 0.05; done
  agent_ep=$(sed -n 's/^agent=//p' "$tmp/endpoints")
  worker_ep=$(sed -n 's/^worker=//p' "$tmp/endpoints")
  for i in $(seq "$c"); do
    "$build/collector/profeed-collector" --broker "$worker_ep" --worker-id "c$i" --replay "$map" --slots 8 \
      --log-level warn 2>>"$tmp/collector.log" &
    pids+=("$!")
  done
  for i in $(seq "$k"); do
    "$build/analyzer/profeed-analyzer" --broker "$worker_ep" --worker-id "a$i" --log-level warn \
      2>>"$tmp/analyzer.log" &
    pids+=("$!")
  done
  for _ in $(seq 100); do
    n=$("$build/client/profeed" status --endpoint "$agent_ep" --json 2>/dev/null | grep -c '"worker_id"' || true)
    [ "$n" -ge $((c + k)) ] && return 0
    sleep 0.1
  done
  echo "pipeline.sh: the workers did not register (see $tmp)" >&2
  exit 1
}

say() { printf '%s\n' "$*" | tee -a "$tmp/summary.txt"; }

# ---------------------------------------------------------------------------
say "# bench/pipeline.sh, $(date -u '+%Y-%m-%d %H:%M UTC')"
cpu=$(sed -n 's/^model name[^:]*: //p' /proc/cpuinfo | head -1)
mem=$(awk '/MemTotal/ {printf "%.0f GB", $2 / 1e6}' /proc/meminfo)
zmq=$(pkg-config --modversion libzmq 2>/dev/null || echo '?')
say "machine: $(nproc) cores ($cpu), $mem, Linux $(uname -r), libzmq $zmq, $build ($build_type)"
say "tree: $(git rev-parse --short HEAD 2>/dev/null || echo '?')$(git diff --quiet HEAD 2>/dev/null || echo ' + uncommitted changes')"
say "runs per measurement: $runs (median run reported)"

if [ "$only_large" -eq 0 ]; then
# 1. Messaging floor.
full_bytes=$(cat "$h200/full_raw.csv" "$h200/full_details.csv" | wc -c)
for size in 64 "$full_bytes"; do
  count=20000
  [ "$size" -gt 64 ] && count=2000
  for _ in $(seq "$runs"); do "$build/bench/zmq_rtt" --size "$size" --count "$count"; done >"$tmp/rtt_$size.txt"
  rtt_p50[size]=$(field p50_us <"$tmp/rtt_$size.txt" | median)
  rtt_p99[size]=$(field p99_us <"$tmp/rtt_$size.txt" | median)
done
say ""
say "## messaging floor: libzmq DEALER <-> ROUTER round trip, tcp loopback"
say "  64 B: p50 ${rtt_p50[64]} us, p99 ${rtt_p99[64]} us"
say "  $full_bytes B (one \`full\` pass): p50 ${rtt_p50[$full_bytes]} us, p99 ${rtt_p99[$full_bytes]} us"

# 2. Analysis floor, per program (the files its replay passes carry).
declare -A files floor_p50 proc_p50 farm_p50 farm_p99
files[kernels]="$h200/pass1_sol.csv $h200/pass2_memory.csv $h200/pass3_warps_occupancy.csv"
files[full]="$h200/full_raw.csv $h200/full_details.csv"
# A profiler run that found no kernel: almost no analysis and small messages,
# so its farm latency is the pipeline's fixed cost.
files[nokernel]="$h200/err_nokernel_stdout.txt"
say ""
say "## analysis floor: one job's captures analyzed in one process"
for prog in nokernel kernels full; do
  # shellcheck disable=SC2086 # the file lists are word lists on purpose
  for _ in $(seq "$runs"); do "$build/bench/farm_load" --analyze --jobs 200 ${files[$prog]}; done \
    >"$tmp/floor_$prog.txt"
  floor_p50[$prog]=$(field p50_ms <"$tmp/floor_$prog.txt" | median)
  # The same through one `profeed analyze` process per job, start-up included.
  : >"$tmp/proc_$prog.txt"
  for _ in $(seq 30); do
    t0=$EPOCHREALTIME
    # shellcheck disable=SC2086
    "$build/client/profeed" analyze --format json ${files[$prog]} >/dev/null
    t1=$EPOCHREALTIME
    awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.3f\n", (b - a) * 1000}' >>"$tmp/proc_$prog.txt"
  done
  proc_p50[$prog]=$(median <"$tmp/proc_$prog.txt")
  say "  $prog: in-process p50 ${floor_p50[$prog]} ms per job; \`profeed analyze\` process p50 ${proc_p50[$prog]} ms"
done

# 3. Latency: one agent, one job at a time, 1 collector, 1 analyzer.
say ""
say "## latency: 1 agent, jobs one at a time, 1 broker + 1 replay collector + 1 analyzer"
start_farm 1 1
# This VM's speed drifts by a few tenths of a millisecond over minutes (other
# tenants), so each run measures the analysis floor right before its farm run
# and the overhead is taken per run (farm p50 - that floor p50); the median of
# those is reported, with every run's value.
for prog in nokernel kernels full; do
  args=("$prog")
  [ "$prog" = kernels ] && args=(kernels all)
  : >"$tmp/lat_$prog.txt"
  : >"$tmp/over_$prog.txt"
  for _ in $(seq "$runs"); do
    # shellcheck disable=SC2086 # the file lists are word lists on purpose
    floor=$("$build/bench/farm_load" --analyze --jobs 100 ${files[$prog]} | field p50_ms)
    line=$("$build/bench/farm_load" --endpoint "$agent_ep" --agents 1 --jobs "$lat_jobs" --warmup 5 -- "${args[@]}")
    printf '%s floor_p50_ms=%s\n' "$line" "$floor" >>"$tmp/lat_$prog.txt"
    awk -v a="$(printf '%s\n' "$line" | field p50_ms)" -v b="$floor" 'BEGIN {printf "%.3f\n", a - b}' \
      >>"$tmp/over_$prog.txt"
  done
  farm_p50[$prog]=$(field p50_ms <"$tmp/lat_$prog.txt" | median)
  farm_p99[$prog]=$(field p99_ms <"$tmp/lat_$prog.txt" | median)
  over=$(median <"$tmp/over_$prog.txt")
  verdict=FAIL
  awk -v o="$over" 'BEGIN {exit !(o <= 1.0)}' && verdict=PASS
  say "  ${args[*]}: p50 ${farm_p50[$prog]} ms, p99 ${farm_p99[$prog]} ms; overhead beyond analysis" \
    "(farm p50 - floor p50, run by run) $over ms (runs: $(paste -sd' ' "$tmp/over_$prog.txt")) [target <= 1 ms: $verdict]"
done
stop_farm

# 3b. The same with the broker's journal (docs/reliability.md): each job's
# request, passes and feedback are written and synced before they are acked.
say ""
say "## latency with the broker's journal (--state-dir, journal-fsync on; $(df -T "$tmp" | awk 'NR==2 {print $2}') under $tmp)"
start_farm 1 1 --state-dir "$tmp/state"
for prog in nokernel full; do
  for _ in $(seq "$runs"); do
    "$build/bench/farm_load" --endpoint "$agent_ep" --agents 1 --jobs "$lat_jobs" --warmup 5 -- "$prog"
  done >"$tmp/jlat_$prog.txt"
  jp50=$(field p50_ms <"$tmp/jlat_$prog.txt" | median)
  jp99=$(field p99_ms <"$tmp/jlat_$prog.txt" | median)
  cost=$(awk -v a="$jp50" -v b="${farm_p50[$prog]}" 'BEGIN {printf "%.3f", a - b}')
  say "  $prog: p50 $jp50 ms, p99 $jp99 ms; the journal adds $cost ms at p50"
done
stop_farm
rm -rf "$tmp/state"

# 4. Throughput with 1 and 2 analyzers.
say ""
say "## throughput: $agents agents x $jobs jobs of \`full\`, 1 broker + 2 replay collectors + K analyzers"
declare -A tput p50 p99 bcpu
for k in 1 2; do
  start_farm 2 "$k"
  : >"$tmp/tput_$k.txt"
  for _ in $(seq "$runs"); do
    c0=$(cpu_s "$broker_pid")
    line=$("$build/bench/farm_load" --endpoint "$agent_ep" --agents "$agents" --jobs "$jobs" --warmup 2 -- full)
    c1=$(cpu_s "$broker_pid")
    n=$(field jobs <<<"$line")
    wall=$(field wall_s <<<"$line")
    used=$(awk -v a="$c0" -v b="$c1" 'BEGIN {printf "%.3f", b - a}')
    pct=$(awk -v u="$used" -v w="$wall" 'BEGIN {printf "%.1f", u / w * 100}')
    per_job=$(awk -v u="$used" -v n="$n" 'BEGIN {printf "%.3f", u / n * 1000}')
    echo "$line broker_cpu_s=$used broker_cpu_pct=$pct broker_cpu_ms_per_job=$per_job" >>"$tmp/tput_$k.txt"
  done
  stop_farm
  tput[$k]=$(field jobs_per_s <"$tmp/tput_$k.txt" | median)
  p50[$k]=$(field p50_ms <"$tmp/tput_$k.txt" | median)
  p99[$k]=$(field p99_ms <"$tmp/tput_$k.txt" | median)
  bcpu[$k]=$(field broker_cpu_pct <"$tmp/tput_$k.txt" | median)
  bms=$(field broker_cpu_ms_per_job <"$tmp/tput_$k.txt" | median)
  all=$(field jobs_per_s <"$tmp/tput_$k.txt" | tr '\n' ' ' | sed 's/ $//')
  say "  K=$k: ${tput[$k]} jobs/s (runs: $all), p50 ${p50[$k]} ms, p99 ${p99[$k]} ms," \
    "broker CPU ${bcpu[$k]}% of one core ($bms ms per job)"
done
ratio=$(awk -v a="${tput[2]}" -v b="${tput[1]}" 'BEGIN {printf "%.2f", a / b}')
verdict=FAIL
awk -v r="$ratio" 'BEGIN {exit !(r >= 1.8)}' && verdict=PASS
say "  2 analyzers / 1 analyzer: ${ratio}x [target >= 1.8x: $verdict; $(nproc) cores on this machine]"
fi

# 5. Large captures, streamed (issue 20).
if [ "$large" -eq 1 ]; then
say ""
say "## large captures: generated \`--set full\` jobs, 1 broker + 1 replay collector + 1 analyzer, streamed in zstd chunks"
kb() { sed -n "s/^$1:[[:space:]]*\([0-9]*\).*/\1/p" "/proc/$2/status"; }
for n in 2000 20000; do
  python3 bench/gen_launches.py --launches "$n" "$h200/full_raw.csv" "$tmp/raw_$n.csv" 2>/dev/null
  python3 bench/gen_launches.py --launches "$n" --details "$h200/full_details.csv" "$tmp/det_$n.csv" 2>/dev/null
  raw=$(cat "$tmp/raw_$n.csv" "$tmp/det_$n.csv" | wc -c)
  printf 'big ncu.000 raw_%s.csv det_%s.csv\n' "$n" "$n" >"$tmp/big_$n.map"
  reps=$runs
  [ "$n" -gt 2000 ] && [ "$reps" -gt "$runs_large" ] && reps=$runs_large # 820 MB: --runs-large runs, each listed
  : >"$tmp/off_$n.txt"
  for _ in $(seq "$reps"); do
    t0=$EPOCHREALTIME
    "$build/client/profeed" analyze --format json "$tmp/raw_$n.csv" "$tmp/det_$n.csv" >"$tmp/off_$n.json"
    t1=$EPOCHREALTIME
    awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.3f\n", b - a}' >>"$tmp/off_$n.txt"
  done
  off=$(median <"$tmp/off_$n.txt")
  # A farm of its own, logging at info (the collector says what it streamed).
  rm -f "$tmp/endpoints"
  "$build/broker/profeed-broker" --agents 'tcp://127.0.0.1:*' --workers 'tcp://127.0.0.1:*' \
    --endpoints-file "$tmp/endpoints" --log-level warn 2>>"$tmp/broker.log" &
  broker_pid=$!
  pids+=("$broker_pid")
  for _ in $(seq 100); do [ -s "$tmp/endpoints" ] && break; sleep 0.05; done
  agent_ep=$(sed -n 's/^agent=//p' "$tmp/endpoints")
  worker_ep=$(sed -n 's/^worker=//p' "$tmp/endpoints")
  "$build/collector/profeed-collector" --broker "$worker_ep" --worker-id c1 --replay "$tmp/big_$n.map" \
    2>"$tmp/collector_$n.log" &
  collector_pid=$!
  pids+=("$collector_pid")
  "$build/analyzer/profeed-analyzer" --broker "$worker_ep" --worker-id a1 --log-level warn 2>>"$tmp/analyzer.log" &
  analyzer_pid=$!
  pids+=("$analyzer_pid")
  for _ in $(seq 100); do
    c=$("$build/client/profeed" status --endpoint "$agent_ep" --json 2>/dev/null | grep -c '"worker_id"' || true)
    [ "$c" -ge 2 ] && break
    sleep 0.1
  done
  declare -A base
  for p in broker:$broker_pid collector:$collector_pid analyzer:$analyzer_pid; do base[${p%%:*}]=$(kb VmRSS "${p#*:}"); done
  : >"$tmp/e2e_$n.txt"
  for _ in $(seq "$reps"); do
    t0=$EPOCHREALTIME
    "$build/client/profeed" submit --endpoint "$agent_ep" --language cuda --arch sm_90 --json -- big >"$tmp/farm_$n.json"
    t1=$EPOCHREALTIME
    awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.3f\n", b - a}' >>"$tmp/e2e_$n.txt"
  done
  e2e=$(median <"$tmp/e2e_$n.txt")
  growth=""
  for p in broker:$broker_pid collector:$collector_pid analyzer:$analyzer_pid; do
    g=$(( ($(kb VmHWM "${p#*:}") - base[${p%%:*}]) / 1024 ))
    growth="$growth ${p%%:*} $g MB,"
  done
  stop_farm
  line=$(grep "streamed:" "$tmp/collector_$n.log" | tail -1)
  chunks=$(sed -n 's/.*streamed: \([0-9]*\) chunks.*/\1/p' <<<"$line")
  zbytes=$(sed -n 's/.* as \([0-9]*\) (.*/\1/p' <<<"$line")
  ratio=$(awk -v r="$raw" -v z="$zbytes" 'BEGIN {printf "%.1f", r / z}')
  per=$(( zbytes / (chunks > 1 ? chunks - 1 : 1) ))
  rtt=$(for _ in $(seq "$runs"); do "$build/bench/zmq_rtt" --size "$per" --count 200; done | field p50_us | median)
  floor=$(awk -v c="$chunks" -v r="$rtt" 'BEGIN {printf "%.3f", c * r / 1e6}')
  target=$(awk -v o="$off" -v f="$floor" 'BEGIN {printf "%.3f", 2 * (o + f)}')
  verdict=FAIL
  awk -v e="$e2e" -v t="$target" 'BEGIN {exit !(e <= t)}' && verdict=PASS
  say "  $n launches ($raw bytes): end to end ${e2e} s; offline \`profeed analyze\` ${off} s + transfer floor" \
    "${floor} s ($chunks chunks of ~$per compressed bytes, ${rtt} us round trip each); $zbytes bytes compressed" \
    "(${ratio}x); peak RSS growth:${growth%,} [target <= 2 x (offline + floor) = ${target} s: $verdict]" \
    "(runs, end to end: $(paste -sd' ' "$tmp/e2e_$n.txt") s; offline: $(paste -sd' ' "$tmp/off_$n.txt") s)"
  rm -f "$tmp/raw_$n.csv" "$tmp/det_$n.csv"
done
fi
say ""
say "(raw per-run lines: --keep keeps $tmp)"
