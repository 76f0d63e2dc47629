#!/usr/bin/env bash
# A job is its submitter's (issue 15, defect 6): another agent that asks for
# the farm's status sees no job ids but its own, and one that names another's
# job id in a Heartbeat gets no Feedback for it, only "not known here". First
# on plaintext (the owner is the connection), then over CURVE (the owner is
# the key; an operator key's status lists every job).
#
#   tests/owner_test.sh BUILD_DIR REPLAY_MAP
set -u
build=$1
map=$2
. "$(dirname "$0")/farm_lib.sh"
farm_scratch owner
profeed=$build/client/profeed
snoop=$build/tests/farm_snoop
hb=(--heartbeat-ms 200 --liveness 3)

workers() { # workers [CURVE FLAGS...]: a slow collector (3 passes of 700 ms) and an analyzer
  "$build/collector/profeed-collector" --broker "$worker_ep" --worker-id c1 --replay "$map" --pass-delay-ms 700 \
    "${hb[@]}" "${@:1:4}" >>"$dir/c1.log" 2>&1 &
  pids+=("$!")
  "$build/analyzer/profeed-analyzer" --broker "$worker_ep" --worker-id a1 "${hb[@]}" "${@:5:4}" \
    >>"$dir/a1.log" 2>&1 &
  pids+=("$!")
}
started() { # started JOB_ID: until its first attempt runs
  for _ in $(seq 100); do grep -q "job $1: attempt 1 on" "$dir/broker.log" && return 0; sleep 0.1; done
  return 1
}

# 1. Plaintext.
farm_broker "ipc://$dir/agents" "ipc://$dir/workers"
[ -n "$agent_ep" ] || { echo "FAIL - the broker did not start"; fail=1; exit 1; }
workers
sleep 0.5
"$profeed" submit --endpoint "$agent_ep" --language cuda --arch sm_90 --job-id owner-plain --wait-s 20 \
  -- kernels all >"$dir/plain.out" 2>"$dir/plain.err" &
victim=$!
started owner-plain
"$snoop" "$agent_ep" 4 owner-plain >"$dir/snoop-plain.out" 2>&1
wait "$victim"
check "plaintext: another agent's status lists no job of the victim" \
  bash -c "! grep -q '^id owner-plain' '$dir/snoop-plain.out'"
check "plaintext: naming the job in a heartbeat gets no feedback" \
  bash -c "! grep -q '^feedback' '$dir/snoop-plain.out' && grep -q '^error .* owner-plain' '$dir/snoop-plain.out'"
check "plaintext: the submitter gets its feedback" grep -q "^1\. atomic_hist" "$dir/plain.out"
farm_stop_and_report
pids=()

# 2. CURVE, with an operator.
keys=$dir/keys
for name in broker c1 a1 agent1 agent2 oper; do
  "$profeed" keygen "$name" --dir "$keys" >/dev/null || { echo "FAIL - keygen $name"; exit 1; }
done
mkdir -p "$keys/agents" "$keys/collectors" "$keys/analyzers" "$keys/operators"
cp "$keys/agent1.key" "$keys/agent2.key" "$keys/agents/"
cp "$keys/oper.key" "$keys/operators/"
cp "$keys/c1.key" "$keys/collectors/"
cp "$keys/a1.key" "$keys/analyzers/"
rm -f "$dir/broker.log"
farm_broker "ipc://$dir/agents2" "ipc://$dir/workers2" --curve-secret "$keys/broker.key_secret" \
  --agent-keys "$keys/agents" --collector-keys "$keys/collectors" --analyzer-keys "$keys/analyzers" \
  --operator-keys "$keys/operators"
[ -n "$agent_ep" ] || { echo "FAIL - the CURVE broker did not start"; fail=1; exit 1; }
workers --curve-secret "$keys/c1.key_secret" --broker-key "$keys/broker.key" \
  --curve-secret "$keys/a1.key_secret" --broker-key "$keys/broker.key"
sleep 1
"$profeed" submit --endpoint "$agent_ep" --curve-secret "$keys/agent1.key_secret" --broker-key "$keys/broker.key" \
  --language cuda --arch sm_90 --job-id owner-curve --wait-s 20 -- kernels all >"$dir/curve.out" 2>"$dir/curve.err" &
victim=$!
started owner-curve
"$snoop" "$agent_ep" 0 --curve "$keys/oper.key_secret" "$keys/broker.key" >"$dir/snoop-oper.out" 2>&1
"$snoop" "$agent_ep" 4 --curve "$keys/agent2.key_secret" "$keys/broker.key" owner-curve >"$dir/snoop-curve.out" 2>&1
wait "$victim"
check "CURVE: an operator's status lists the job" grep -q "^id owner-curve" "$dir/snoop-oper.out"
check "CURVE: another agent key's status does not" bash -c "! grep -q '^id owner-curve' '$dir/snoop-curve.out'"
check "CURVE: another key naming the job gets no feedback" \
  bash -c "! grep -q '^feedback' '$dir/snoop-curve.out' && grep -q '^error .* owner-curve' '$dir/snoop-curve.out'"
check "CURVE: the submitting key gets its feedback" grep -q "^1\. atomic_hist" "$dir/curve.out"
exit "$fail"
