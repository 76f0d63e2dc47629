#!/bin/bash
# The broker's journal where the disk syncs slowly, run by hand, never by ctest:
#
#   bench/slow_disk.sh [--runs R] [--delays "0 20 100 1000"] [--agents N] [--jobs M] BUILD [BUILD...]
#
# For each build (a build folder with profeed-broker, profeed-collector,
# profeed-analyzer, profeed, bench/farm_load and bench/libslow_sync.so) and each
# delay D in milliseconds: a farm on loopback (a broker with --state-dir, the
# journal synced, two replay collectors, one analyzer), whose broker runs with
# bench/slow_sync.c preloaded so that every fsync and fdatasync takes D ms more
# than this disk does; N agents submit M `full` jobs each (bench/farm_load).
# Prints, per build and delay, the median over R runs (builds alternate run by
# run, so drift on a shared machine falls on both) of jobs/s, p50 and p99 job
# latency, and the warnings that say the farm's workers were lost (no
# heartbeat) or a job attempt went stale. Defaults: 3 runs, delays 0 20 100,
# 4 agents x 8 jobs (the 1000 ms delay is kept short by --jobs 2).
set -euo pipefail
cd "$(dirname "$0")/.."
runs=3
delays="0 20 100"
agents=4
jobs=8
builds=()
while [ $# -gt 0 ]; do
  case $1 in
    --runs) runs=$2; shift ;;
    --delays) delays=$2; shift ;;
    --agents) agents=$2; shift ;;
    --jobs) jobs=$2; shift ;;
    -h|--help) sed -n '2,17p' "$0"; exit 0 ;;
    -*) echo "slow_disk.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
    *) builds+=("$1") ;;
  esac
  shift
done
[ ${#builds[@]} -gt 0 ] || { echo "slow_disk.sh: name at least one build folder (see --help)" >&2; exit 2; }
for b in "${builds[@]}"; do
  for f in broker/profeed-broker collector/profeed-collector analyzer/profeed-analyzer client/profeed \
           bench/farm_load bench/libslow_sync.so; do
    [ -e "$b/$f" ] || { echo "slow_disk.sh: $b/$f is missing; build it first" >&2; exit 1; }
  done
done
map=tests/fixtures/replay/h200.map
tmp=$(mktemp -d "${TMPDIR:-/tmp}/profeed-slowdisk.XXXXXX")
pids=()
stop() {
  local p
  for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  pids=()
}
trap 'stop; rm -rf "$tmp"' EXIT
trap 'exit 130' INT TERM
field() { sed -n "s/\(^\|.* \)$1=\([^ ]*\).*/\2/p"; }
median() { sort -g | awk '{v[NR]=$1} END {print v[int((NR + 1) / 2)]}'; }

# one BUILD DELAY: one run; appends "jobs_per_s=... p50_ms=... p99_ms=... lost=..." to $tmp/BUILD#DELAY
one() {
  local b=$1 d=$2 run=$tmp/run n i
  rm -rf "$run"; mkdir -p "$run"
  LD_PRELOAD="$(cd "$b" && pwd)/bench/libslow_sync.so" SLOW_SYNC_MS=$d "$b/broker/profeed-broker" \
    --agents 'tcp://127.0.0.1:*' --workers 'tcp://127.0.0.1:*' --endpoints-file "$run/endpoints" \
    --log-level warn --state-dir "$run/state" 2>>"$run/log" &
  pids+=("$!")
  for _ in $(seq 100); do [ -s "$run/endpoints" ] && break; sleep 0.05; done
  local aep wep
  aep=$(sed -n 's/^agent=//p' "$run/endpoints")
  wep=$(sed -n 's/^worker=//p' "$run/endpoints")
  for i in 1 2; do
    "$b/collector/profeed-collector" --broker "$wep" --worker-id "c$i" --replay "$map" --slots 8 --log-level warn \
      2>>"$run/log" &
    pids+=("$!")
  done
  "$b/analyzer/profeed-analyzer" --broker "$wep" --worker-id a1 --log-level warn 2>>"$run/log" &
  pids+=("$!")
  for _ in $(seq 200); do
    n=$("$b/client/profeed" status --endpoint "$aep" --json 2>/dev/null | grep -c '"worker_id"' || true)
    [ "$n" -ge 3 ] && break
    sleep 0.1
  done
  local line lost
  line=$("$b/bench/farm_load" --endpoint "$aep" --agents "$agents" --jobs "$jobs" --warmup 1 -- full | grep '^jobs=')
  stop
  if grep -q "cannot be preloaded" "$run/log"; then
    echo "slow_disk.sh: the broker ran without bench/libslow_sync.so:" >&2
    grep "cannot be preloaded" "$run/log" | head -1 >&2
    exit 1
  fi
  lost=$(grep -c -E "lost: no heartbeat|stale attempt" "$run/log" || true)
  echo "$line lost=$lost" >>"$tmp/$(echo "$b" | tr '/' '_')#$d"
}

echo "# bench/slow_disk.sh, $(date -u '+%Y-%m-%d %H:%M UTC'): $(nproc) cores, $agents agents x $jobs \`full\` jobs," \
  "journal on $(df -T "$tmp" | awk 'NR==2 {print $2}'), medians of $runs runs"
for d in $delays; do
  for _ in $(seq "$runs"); do
    for b in "${builds[@]}"; do one "$b" "$d"; done
  done
  for b in "${builds[@]}"; do
    f="$tmp/$(echo "$b" | tr '/' '_')#$d"
    printf '%s: fsync +%s ms: %s jobs/s, p50 %s ms, p99 %s ms, workers lost or attempts stale: %s (runs: %s jobs/s)\n' \
      "$b" "$d" "$(field jobs_per_s <"$f" | median)" "$(field p50_ms <"$f" | median)" "$(field p99_ms <"$f" | median)" \
      "$(field lost <"$f" | median)" "$(field jobs_per_s <"$f" | tr '\n' ' ' | sed 's/ $//')"
  done
done
