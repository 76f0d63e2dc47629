#!/usr/bin/env bash
# What a finished job holds in the broker (issue 15, defect 5):
#  1. its feedback, not its passes, even when its agent never acknowledges
#     the feedback (farm_watch does not). Five jobs with a 500 KiB pass each
#     run to the end; the broker's metrics then count no pass bytes held, only
#     feedback.
#  2. with a journal (--state-dir), not even the feedback once the agent has
#     acknowledged it (profeed submit does): five delivered jobs hold 0
#     feedback bytes, and the same five submitted again get the identical
#     feedback, read back from the journal, without a collection attempt;
#     again after a kill -9 and restart of the broker.
#
#   tests/retain_test.sh BUILD_DIR REPLAY_MAP
set -u
build=$1
map=$2
. "$(dirname "$0")/farm_lib.sh"
farm_scratch retain
# Liveness of 3 s, not the 0.6 s other farm tests use: "collected once" must not
# count a requeue after a scheduling pause of a loaded machine as a second run.
hb=(--heartbeat-ms 500 --liveness 6)

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
sample() { # sample NAME: the value of the metric line that starts with NAME and a space
  python3 -c 'import sys,urllib.request
page=urllib.request.urlopen("http://127.0.0.1:%s/metrics" % sys.argv[1], timeout=3).read().decode()
for line in page.splitlines():
    if line.startswith(sys.argv[2] + " "):
        print(int(float(line.split()[-1])))' "$port" "$1"
}
metric() { sample "profeed_broker_retained_bytes{kind=\"$1\"}"; } # metric KIND
passes=$(metric passes)
feedback=$(metric feedback)
echo "# held: passes ${passes:-?} bytes, feedback ${feedback:-?} bytes"
check "finished jobs hold no pass bytes" [ "${passes:-x}" = 0 ]
check "... only their feedback" bash -c "[ '${feedback:-0}' -gt 0 ] && [ '${feedback:-0}' -lt 1000000 ]"
each=$((${feedback:-0} / 5))

# 2. The same farm under a broker with a journal (the workers reconnect).
profeed=$build/client/profeed
restart_broker() { # kill -9, then the same endpoints, metrics port and journal
  kill -KILL "$broker_pid"
  wait "$broker_pid" 2>/dev/null
  farm_broker "ipc://$dir/agents" "ipc://$dir/workers" --metrics "tcp://127.0.0.1:$port" --state-dir "$dir/state"
}
submit_all() { # submit_all NAME: the five jobs, each output in $dir/NAME-$i.json
  local i rc=0
  for i in 1 2 3 4 5; do
    "$profeed" submit --endpoint "$agent_ep" --language cuda --arch sm_90 --job-id "kept-$i" --json --wait-s 30 \
      -- full >"$dir/$1-$i.json" 2>"$dir/$1-$i.err" || rc=1
  done
  return "$rc"
}
same_feedback() { # same_feedback NAME: NAME's outputs are the first ones, byte for byte
  local i
  for i in 1 2 3 4 5; do cmp -s "$dir/first-$i.json" "$dir/$1-$i.json" || return 1; done
}
held_settles() { # the feedback held in memory is 0 bytes (the acks arrive just after the feedback)
  local _ held
  for _ in $(seq 50); do
    held=$(metric feedback)
    [ "${held:-x}" = 0 ] && return 0
    sleep 0.1
  done
  echo "# feedback held: ${held:-?} bytes"
  return 1
}
restart_broker
check "five jobs finish and are delivered (profeed submit acknowledges)" submit_all first
check "... each with a feedback" bash -c "grep -q '\"kernels\"' '$dir/first-1.json' && grep -q '\"kernels\"' '$dir/first-5.json'"
check "delivered feedback is not held in memory (the journal has it; $each bytes each undelivered)" held_settles
attempts=$(sample profeed_broker_attempts_total)
check "submitted again, the five finish" submit_all again
check "... with the identical feedback" same_feedback again
check "... read back from the journal (a heartbeat crossing the answer may read it once more)" \
  bash -c "[ \$(grep -c 'delivered feedback read back from the journal' '$dir/broker.log') -ge 5 ]"
check "... without a collection attempt" [ "$(sample profeed_broker_attempts_total)" = "${attempts:-x}" ]
check "... and still none held in memory" held_settles
restart_broker
check "after a broker kill -9, delivered feedback read back from the journal is not held in memory" held_settles
check "... submitted again, the five finish" submit_all restarted
check "... with the identical feedback" same_feedback restarted
check "... read back from the journal" \
  bash -c "[ \$(grep -c 'delivered feedback read back from the journal' '$dir/broker.log') -ge 10 ]"
check "... without a collection attempt" [ "$(sample profeed_broker_attempts_total)" = 0 ]
check "each job was collected once in all" \
  bash -c "for i in 1 2 3 4 5; do [ \$(grep -c \"job kept-\$i: attempt\" '$dir/broker.log') -eq 1 ] || exit 1; done"
exit "$fail"
