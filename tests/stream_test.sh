#!/usr/bin/env bash
# Streamed passes (issue 20): a generated 2,000-launch `--set full` capture
# (82 MB: bench/gen_launches.py on the H200 full_raw.csv and full_details.csv)
# goes through a broker, a replay collector and an analyzer as real
# processes, in zstd chunks; the feedback equals `profeed analyze` on the same
# files, and no process's peak RSS (VmHWM) grows by 64 MB or more, though the
# capture is 82 MB. Then, with chunks of 64 KiB so that a stream lasts
# long enough to be cut, kill -9 of the analyzer, the collector and the
# (journaled) broker in the middle of a job's stream: each job is collected
# again and returns one feedback, equal to the offline analysis. Then the
# broker's limits: stream-memory-mb (a stream past it waits) and
# max-capture-mb (a job past it fails, naming it).
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
agents=tcp://127.0.0.1:${ports[0]} workers=tcp://127.0.0.1:${ports[1]}
farm_broker "$agents" "$workers" --state-dir "$dir/state"
start_collector() { # start_collector [FLAGS...]
  "$build/collector/profeed-collector" --broker "$worker_ep" --worker-id c1 --replay "$dir/big.map" "${hb[@]}" "$@" \
    >>"$dir/c1.log" 2>&1 &
  collector_pid=$!
  pids+=("$collector_pid")
}
# The analyzer's spool goes under $dir: one killed with SIGKILL leaves its
# spool behind, and the test's folder takes it away.
mkdir -p "$dir/tmp"
start_analyzer() {
  TMPDIR=$dir/tmp "$build/analyzer/profeed-analyzer" --broker "$worker_ep" --worker-id a1 "${hb[@]}" --log-level debug \
    >>"$dir/a1.log" 2>&1 &
  analyzer_pid=$!
  pids+=("$analyzer_pid")
}
start_collector
start_analyzer
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
"$profeed" submit --endpoint "$agent_ep" --language cuda --arch sm_90 --json --job-id stream-round1 -- big \
  >"$dir/farm.json" 2>"$dir/farm.err"
rc=$?
end=$(date +%s.%N)
check "the $launches-launch job returns feedback (exit $rc)" test "$rc" -eq 0
check "the collector streamed the pass in chunks" grep -q "streamed:" "$dir/c1.log"
check "... which the analyzer parsed as they came, not from disk" \
  grep -q "job stream-round1: pass ncu.000 streamed in (.* chunks, its ncu pages parsed as they came" "$dir/a1.log"
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
same_as_offline() { # same_as_offline FARM_JSON
python3 - "$1" "$dir/offline.json" <<'PY'
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
}
same_as_offline "$dir/farm.json"
check "the farm's feedback equals profeed analyze on the same files" test $? -eq 0

# A streamed job's context (plan, target, baseline) rides on its last chunk: a
# second round compares with the first, and both carry the farm's manifest.
"$profeed" submit --endpoint "$agent_ep" --language cuda --arch sm_90 --json --job-id stream-round2 \
  --baseline-job stream-round1 -- big >"$dir/round2.json" 2>"$dir/round2.err"
check "a streamed job with --baseline-job of a streamed one returns feedback (exit $?)" test -s "$dir/round2.json"
check "... comparing every kernel with the first round, and its manifest names the plan and target" \
  python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
c, m = d.get("comparison") or {}, d.get("manifest") or {}
ok = c.get("kernels") and not c.get("problem") and all(k.get("matched_by") == "name" for k in c["kernels"])
sys.exit(0 if ok and m.get("plan") and m.get("target") == "big" else 1)' "$dir/round2.json"

# A real (not replayed) collector streams too, with the `full` plan whose
# reports come from `ncu --import` on stdout (82 MB here, over the
# collector's 48 MB max-output-mb: they go to their files directly). Its
# stand-in ncu prints the generated pages for --import and runs the program
# otherwise.
mkdir -p "$dir/bin" "$dir/work"
cat >"$dir/bin/ncu" <<SH
#!/bin/sh
if [ "\$1" = "--version" ]; then echo "Version 0.0 (test stand-in)"; exit 0; fi
import=0
while [ \$# -gt 0 ]; do
  case \$1 in
    --import) import=1; shift 2 ;;
    --page) page=\$2; shift 2 ;;
    --csv | -f) shift ;;
    -o | --*) shift 2 ;;
    *) break ;;
  esac
done
[ \$import -eq 1 ] && exec cat "$dir/full_\$page.csv"
exec "\$@"
SH
chmod 0755 "$dir" "$dir/bin" "$dir/bin/ncu" && chmod 0644 "$dir"/full_*.csv && chmod 0777 "$dir/work"
as_user=()
[ "$(id -u)" -eq 0 ] && as_user=(--run-as nobody)
PATH="$dir/bin:$PATH" "$build/collector/profeed-collector" --broker "$worker_ep" --worker-id r1 --gpu "Test GPU:sm_80" \
  --allow-programs true --workdir "$dir/work" "${as_user[@]}" "${hb[@]}" >>"$dir/r1.log" 2>&1 &
pids+=("$!")
for _ in $(seq 200); do grep -q "worker r1 (peer [0-9a-f]*) ready" "$dir/broker.log" && break; sleep 0.05; done
"$profeed" submit --endpoint "$agent_ep" --language cuda --arch sm_80 --plan full --json --wait-s 60 -- true \
  >"$dir/real.json" 2>"$dir/real.err"
rc=$?
check "a real collector's 82 MB full-plan pass returns feedback (exit $rc)" test "$rc" -eq 0
check "... streamed in chunks" grep -q "pass ncu.000 streamed:" "$dir/r1.log"
# A real pass lists its folder in name order (details before raw), and the
# analysis of the two pages depends on their order (the details page's rounded
# values win where both have a metric), so the offline run takes that order.
"$profeed" analyze --language cuda --arch sm_90 --format json "$dir/full_details.csv" "$dir/full_raw.csv" \
  >"$dir/offline_dr.json" 2>/dev/null
python3 - "$dir/real.json" "$dir/offline_dr.json" <<'PY'
import json, sys
f, o = (json.load(open(p)).get("kernels") for p in sys.argv[1:3])
sys.exit(0 if f and f == o else 1)
PY
check "... with the kernels and findings of profeed analyze on the files" test $? -eq 0

# restart_broker [FLAGS...]: kill -9, the same ports and journal, and wait
# until every worker is back (so the log lines the checks read are this
# broker's; a job submitted before c1 is back is queued, not refused, while
# the broker gives its workers the time to return).
restart_broker() {
  local from=$(($(wc -l <"$dir/broker.log") + 1)) n all
  kill -KILL "$broker_pid"
  wait "$broker_pid" 2>/dev/null
  farm_broker "$agents" "$workers" --state-dir "$dir/state" "$@"
  for _ in $(seq 200); do
    all=1
    for n in c1 r1 a1; do
      tail -n +"$from" "$dir/broker.log" | grep -q "worker $n (peer [0-9a-f]*) ready" || all=0
    done
    [ "$all" -eq 1 ] && return 0
    sleep 0.05
  done
}

# kill -9 mid-stream. Small chunks make the stream last a few seconds.
restart_broker --chunk-kb 64
# A streamed job that finds no analyzer (they are coming back) waits for one
# without spending an attempt: its chunks are not kept, so the stream stops
# and the job is dispatched again.
from=$(($(wc -l <"$dir/broker.log") + 1))
kill -KILL "$analyzer_pid"
wait "$analyzer_pid" 2>/dev/null
for _ in $(seq 200); do tail -n +"$from" "$dir/broker.log" | grep -q "worker a1 (analyzer, .*) lost" && break; sleep 0.05; done
"$profeed" submit --endpoint "$agent_ep" --language cuda --arch sm_90 --json --job-id stream-wait --wait-s 90 -- big \
  >"$dir/stream-wait.json" 2>"$dir/stream-wait.err" &
submit_pid=$!
for _ in $(seq 600); do grep -q "job stream-wait: no analyzer for ncu streams yet" "$dir/broker.log" && break; sleep 0.02; done
start_analyzer
wait "$submit_pid"
rc=$?
check "a streamed job with no analyzer registered yet completes once one comes (exit $rc)" test "$rc" -eq 0
check "... it waited for one (the stream was stopped)" grep -q "job stream-wait: no analyzer for ncu streams yet" \
  "$dir/broker.log"
check "... without spending an attempt" grep -q "job stream-wait: finished (attempt 1)" "$dir/broker.log"

for victim in analyzer collector broker; do
  id=stream-kill-$victim
  "$profeed" submit --endpoint "$agent_ep" --language cuda --arch sm_90 --json --job-id "$id" --wait-s 90 -- big \
    >"$dir/$id.json" 2>"$dir/$id.err" &
  submit_pid=$!
  # Killed once the analyzer has taken 4 MB of the 82 (64 chunks of 64
  # KiB): mid-stream, on a fast build as on a sanitized one (a fixed pause
  # missed the stream).
  for _ in $(seq 3000); do
    grep -q "job $id: pass ncu.000 chunk 64 taken" "$dir/a1.log" && break
    sleep 0.01
  done
  cut=$(grep -c "job $id: pass ncu.000 (1 of 1) streamed" "$dir/broker.log")
  case $victim in
  analyzer) kill -KILL "$analyzer_pid"; wait "$analyzer_pid" 2>/dev/null; start_analyzer ;;
  collector) kill -KILL "$collector_pid"; wait "$collector_pid" 2>/dev/null; start_collector ;;
  broker) restart_broker --chunk-kb 64 ;;
  esac
  wait "$submit_pid"
  rc=$?
  check "kill -9 of the $victim mid-stream: the job still returns feedback (exit $rc)" test "$rc" -eq 0
  check "... the kill came before the stream ended" test "$cut" -eq 0
  finished=$(grep -c "job $id: finished" "$dir/broker.log")
  attempt=$(sed -n "s/.*job $id: finished (attempt \([0-9]*\)).*/\1/p" "$dir/broker.log" | tail -1)
  echo "# $victim killed: finished $finished time(s), at attempt ${attempt:-?}"
  check "... it finished once, collected again after the kill" test "$finished" -eq 1 -a "${attempt:-0}" -ge 2
  same_as_offline "$dir/$id.json"
  check "... and its feedback equals profeed analyze" test $? -eq 0
done

# The memory streams in flight may hold in the broker is a setting
# (stream-memory-mb): with room for one stream's window of chunks, two jobs
# at once on a collector of two slots stream one after the other, the second
# stopped and dispatched again until the first is through, and told why.
kill -KILL "$collector_pid"
wait "$collector_pid" 2>/dev/null
start_collector --slots 2
restart_broker --chunk-kb 256 --stream-memory-mb 1
for id in stream-budget-a stream-budget-b; do
  "$profeed" submit --endpoint "$agent_ep" --language cuda --arch sm_90 --json --job-id "$id" --wait-s 90 -- big \
    >"$dir/$id.json" 2>"$dir/$id.err" &
  budget_pids+=("$!")
done
budget_rc=0
for p in "${budget_pids[@]}"; do wait "$p" || budget_rc=1; done
check "two streams over stream-memory-mb at once both return feedback" test "$budget_rc" -eq 0
check "... one waited, the broker saying which limit" \
  grep -q "streams in flight hold the broker's stream-memory-mb of 1 MiB" "$dir/broker.log"
for id in stream-budget-a stream-budget-b; do
  same_as_offline "$dir/$id.json"
  check "... $id's feedback equals profeed analyze" test $? -eq 0
done
# A budget that cannot hold one stream's window is refused at start.
"$build/broker/profeed-broker" --agents "$agents" --workers "$workers" --bind-retry-ms 0 --chunk-kb 1024 \
  --stream-memory-mb 1 >"$dir/budget-refused.log" 2>&1
rc=$?
check "a stream-memory-mb below one stream's window is refused at start (exit $rc)" test "$rc" -ne 0
check "... naming the setting" grep -q "stream-memory-mb of 1 MiB does not hold one stream's window" \
  "$dir/budget-refused.log"

# The largest capture per job is a setting, and a job past it is told which.
restart_broker --max-capture-mb 16
"$profeed" submit --endpoint "$agent_ep" --language cuda --arch sm_90 --json --wait-s 60 -- big \
  >"$dir/capped.json" 2>"$dir/capped.err"
rc=$?
check "a capture over max-capture-mb fails (exit $rc)" test "$rc" -ne 0
check "... saying which limit" grep -q "over the broker's limit of 16 MiB per job (max-capture-mb)" \
  "$dir/capped.json" "$dir/capped.err"
exit $fail
