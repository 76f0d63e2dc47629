#!/usr/bin/env bash
# The metrics endpoint under attack (issue 15, defects 2 and 3): a broker
# serving agents and workers on ipc:// and metrics on a TCP port.
#  2. 1000 connections opened and reset at once must not stop the broker's
#     loop: metrics and `profeed status` still answer at once;
#  3. 70 connections opened and left idle (more than the 64 slots) must not
#     starve scrapers: 20 GET /metrics in a row all answer while they stay.
#
#   tests/metrics_attack_test.sh BUILD_DIR
set -u
build=$1
here=$(dirname "$0")
. "$here/farm_lib.sh"
farm_scratch metrics-attack
hb=(--heartbeat-ms 200 --liveness 3)

status_answers() { # status_answers: profeed status answers within 3 s
  timeout 3 "$build/client/profeed" status --endpoint "$agent_ep" >"$dir/status.out" 2>&1
}

farm_ports metrics-attack 1 # a port outside the ephemeral range, locked for this test
port=${ports[0]}
farm_broker "ipc://$dir/agents" "ipc://$dir/workers" --metrics "tcp://127.0.0.1:$port" --log-level info
[ -n "$agent_ep" ] || { echo "FAIL - the broker did not start"; fail=1; exit 1; }

check "1000 reset connections: metrics still answer" python3 "$here/metrics_attack.py" "$port" resets
check "... and so do agents (profeed status)" status_answers
# A fresh broker: each defect on its own.
kill -KILL "$broker_pid"
wait "$broker_pid" 2>/dev/null
farm_broker "ipc://$dir/agents" "ipc://$dir/workers" --metrics "tcp://127.0.0.1:$port" --log-level info
check "70 idle connections: every scrape answers" python3 "$here/metrics_attack.py" "$port" half-open
check "... and agents too" status_answers
check "the broker is still running" kill -0 "$broker_pid"
exit "$fail"
