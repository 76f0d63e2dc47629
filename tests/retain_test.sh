#!/usr/bin/env bash
# What a finished job holds in the broker (issue 15, defect 5): its
# feedback, not its passes, even when its agent never acknowledges the
# feedback (farm_watch does not). Five jobs with a 500 KiB pass each run to
# the end; the broker's metrics then count no pass bytes held, only feedback.
#
#   tests/retain_test.sh BUILD_DIR REPLAY_MAP
set -u
build=$1
map=$2
. "$(dirname "$0")/farm_lib.sh"
farm_scratch retain
hb=(--heartbeat-ms 200 --liveness 3)

farm_ports retain 1 # a port outside the ephemeral range, locked for this test
port=${ports[0]}
farm_broker "ipc://$dir/agents" "ipc://$dir/workers" --metrics "tcp://127.0.0.1:$port"
[ -n "$agent_ep" ] || { echo "FAIL - the broker did not start"; fail=1; exit 1; }
"$build/collector/profeed-collector" --broker "$worker_ep" --worker-id c1 --replay "$map" "${hb[@]}" \
  >>"$dir/c1.log" 2>&1 &
pids+=("$!")
"$build/analyzer/profeed-analyzer" --broker "$worker_ep" --worker-id a1 "${hb[@]}" >>"$dir/a1.log" 2>&1 &
pids+=("$!")
sleep 1
ok=0
for i in 1 2 3 4 5; do
  "$build/tests/farm_watch" "$agent_ep" full "retain-$i" off >"$dir/watch$i.out" 2>&1 && grep -q feedback "$dir/watch$i.out" &&
    ok=$((ok + 1))
done
check "five jobs with a 500 KiB pass each finish (never acknowledged)" [ "$ok" -eq 5 ]
metric() { # metric KIND: profeed_broker_retained_bytes{kind=KIND}
  python3 -c 'import sys,urllib.request
page=urllib.request.urlopen("http://127.0.0.1:%s/metrics" % sys.argv[1], timeout=3).read().decode()
for line in page.splitlines():
    if line.startswith("profeed_broker_retained_bytes{kind=\"%s\"}" % sys.argv[2]):
        print(int(float(line.split()[-1])))' "$port" "$1"
}
passes=$(metric passes)
feedback=$(metric feedback)
echo "# held: passes ${passes:-?} bytes, feedback ${feedback:-?} bytes"
check "finished jobs hold no pass bytes" [ "${passes:-x}" = 0 ]
check "... only their feedback" bash -c "[ '${feedback:-0}' -gt 0 ] && [ '${feedback:-0}' -lt 1000000 ]"
exit "$fail"
