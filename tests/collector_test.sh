#!/usr/bin/env bash
# The collector's job threads against a stand-in broker (tests/fake_broker.c),
# which drives what a farm only reaches by chance:
#  1. attempt 2 of a running job replaces attempt 1 (cancelled during its
#     first pass, so no pass of it is sent) and runs whole;
#  2. the next job runs on the same slot's thread (--slots 1);
#  3. a collector stopped (SIGTERM) mid-job exits within 5 s, cleanly.
#
#   tests/collector_test.sh BUILD_DIR REPLAY_MAP
set -u
build=$1
map=$2
. "$(dirname "$0")/farm_lib.sh"
farm_scratch collector
hb=(--heartbeat-ms 200 --liveness 5)

"$build/tests/fake_broker" "$dir/endpoints" kernels >"$dir/fake.out" 2>"$dir/fake.log" &
pids+=("$!")
for _ in $(seq 100); do [ -s "$dir/endpoints" ] && break; sleep 0.05; done
worker_ep=$(sed -n 's/^worker=//p' "$dir/endpoints")
"$build/collector/profeed-collector" --broker "$worker_ep" --worker-id c1 --replay "$map" --slots 1 \
  --pass-delay-ms 400 "${hb[@]}" >>"$dir/collector.log" 2>&1 &
collector=$!
pids+=("$collector")
for _ in $(seq 200); do grep -q '^running$' "$dir/fake.out" && break; sleep 0.05; done

check "attempt 1 and attempt 2 each announced their plan" [ "$(grep -c '^plan job-a 3$' "$dir/fake.out")" -eq 2 ]
check "attempt 2 sent its three passes, attempt 1 none" [ "$(grep -c '^pass job-a ' "$dir/fake.out")" -eq 3 ]
check "no error came back" bash -c "! grep -q '^error' '$dir/fake.out'"
check "the next job runs on the same slot" grep -q '^running$' "$dir/fake.out"
check "the collector logged the replacement" grep -q "attempt 2" "$dir/collector.log"

kill -TERM "$collector"
stopped=0
for _ in $(seq 100); do
  if ! kill -0 "$collector" 2>/dev/null; then stopped=1; break; fi
  sleep 0.05
done
check "stopped mid-job, the collector exits within 5 s" [ "$stopped" -eq 1 ]
wait "$collector"
check "and exits 0" [ $? -eq 0 ]
[ "$fail" -eq 0 ] || cat "$dir/fake.out"
exit "$fail"
