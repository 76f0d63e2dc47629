#!/usr/bin/env bash
# Streamed passes (issue 20): a generated 2,000-launch `--set full` capture
# (82 MB: bench/gen_launches.py on the H200 full_raw.csv and full_details.csv)
# goes through a broker, a replay collector and an analyzer as real
# processes, in zstd chunks; the feedback equals `profeed analyze` on the same
# files, and no process's peak RSS (VmHWM) grows by 64 MB or more, though the
# capture is 82 MB.
#
#   tests/stream_test.sh BUILD_DIR [LAUNCHES]
set -u
build=$1
launches=${2:-2000}
src=$(cd "$(dirname "$0")" && pwd)
. "$src/farm_lib.sh"
farm_scratch_kept stream
profeed=$build/client/profeed
hb=(--heartbeat-ms 500 --liveness 3)
fix=$src/fixtures/ncu/h200

python3 "$src/../bench/gen_launches.py" --launches "$launches" "$fix/full_raw.csv" "$dir/full_raw.csv" ||
  farm_die "gen_launches.py failed"
python3 "$src/../bench/gen_launches.py" --launches "$launches" --details "$fix/full_details.csv" \
  "$dir/full_details.csv" || farm_die "gen_launches.py --details failed"
bytes=$(($(stat -c %s "$dir/full_raw.csv") + $(stat -c %s "$dir/full_details.csv")))
echo "# capture: $launches launches, $bytes bytes"
printf 'big ncu.000 full_raw.csv full_details.csv\n' >"$dir/big.map"

hwm_kb() { sed -n 's/^VmHWM:[[:space:]]*\([0-9]*\).*/\1/p' "/proc/$1/status"; }
rss_kb() { sed -n 's/^VmRSS:[[:space:]]*\([0-9]*\).*/\1/p' "/proc/$1/status"; }

farm_ports stream 2
farm_broker "tcp://127.0.0.1:${ports[0]}" "tcp://127.0.0.1:${ports[1]}"
"$build/collector/profeed-collector" --broker "$worker_ep" --worker-id c1 --replay "$dir/big.map" "${hb[@]}" \
  >>"$dir/c1.log" 2>&1 &
collector_pid=$!
pids+=("$collector_pid")
"$build/analyzer/profeed-analyzer" --broker "$worker_ep" --worker-id a1 "${hb[@]}" >>"$dir/a1.log" 2>&1 &
analyzer_pid=$!
pids+=("$analyzer_pid")
for _ in $(seq 100); do
  [ "$(grep -c 'registered' "$dir/broker.log")" -ge 2 ] && break
  sleep 0.1
done
# The baseline: each process up and registered, before the job.
declare -A base
for p in broker:$broker_pid collector:$collector_pid analyzer:$analyzer_pid; do
  base[${p%%:*}]=$(rss_kb "${p#*:}")
done

start=$(date +%s.%N)
"$profeed" submit --endpoint "$agent_ep" --language cuda --arch sm_90 --json -- big \
  >"$dir/farm.json" 2>"$dir/farm.err"
rc=$?
end=$(date +%s.%N)
check "the $launches-launch job returns feedback (exit $rc)" test "$rc" -eq 0
check "the collector streamed the pass in chunks" grep -q "streamed:" "$dir/c1.log"
grep "streamed:" "$dir/c1.log" | sed 's/.*streamed: /# collector: /'
echo "# end to end: $(echo "$end - $start" | bc) s"

for p in broker:$broker_pid collector:$collector_pid analyzer:$analyzer_pid; do
  name=${p%%:*} pid=${p#*:}
  hwm=$(hwm_kb "$pid")
  growth=$((hwm - base[$name]))
  echo "# $name: RSS at start ${base[$name]} kB, peak $hwm kB, growth $((growth / 1024)) MB"
  check "the $name's peak RSS grew by less than 64 MB ($((growth / 1024)) MB for a $((bytes / 1048576)) MB capture)" \
    test "$growth" -lt $((64 * 1024))
done

"$profeed" analyze --language cuda --arch sm_90 --format json "$dir/full_raw.csv" "$dir/full_details.csv" \
  >"$dir/offline.json" 2>"$dir/offline.err"
# The farm's document carries the worker, metadata and the replay note; the
# findings and kernels must be the offline analysis's.
python3 - "$dir/farm.json" "$dir/offline.json" <<'PY'
import json, sys
farm = json.load(open(sys.argv[1]))
off = json.load(open(sys.argv[2]))
def body(d):
    return {k: d.get(k) for k in ("profiler", "status", "summary", "kernels", "missing_metrics", "errors")}
f, o = body(farm), body(off)
if f != o:
    for k in f:
        if f[k] != o[k]:
            print(f"# differs: {k}: farm {json.dumps(f[k])[:300]} offline {json.dumps(o[k])[:300]}")
    sys.exit(1)
if not f["kernels"]:
    sys.exit("# no kernels analyzed: nothing was compared")
n = sum(len(k.get("findings", [])) for k in f["kernels"])
print(f"# {len(f['kernels'])} kernels, {n} findings, equal")
PY
check "the farm's feedback equals profeed analyze on the same files" test $? -eq 0
exit $fail
