#!/usr/bin/env bash
# CURVE on the farm (issue 7): keys made with `profeed keygen`, a broker that
# admits agents, collectors and analyzers by their folders, and the refusals:
# an unknown key, a collector key submitting, an agent key registering as a
# worker, a collector key registering as an analyzer, plaintext to a secured
# endpoint, and plaintext off this machine without --insecure.
#
#   tests/curve_test.sh BUILD_DIR REPLAY_MAP
set -u
build=$1
map=$2
. "$(dirname "$0")/farm_lib.sh"
farm_scratch curve
profeed=$build/client/profeed
hb=(--heartbeat-ms 200 --liveness 3)

keys=$dir/keys
for name in broker c1 a1 agent1 stranger; do
  "$profeed" keygen "$name" --dir "$keys" >/dev/null || { echo "FAIL - keygen $name"; exit 1; }
done
check "keygen writes a public and a private file, the secret one 0600" \
  bash -c "[ -s '$keys/c1.key' ] && [ \"\$(stat -c %a '$keys/c1.key_secret')\" = 600 ]"
check "keygen never overwrites a key" bash -c "! '$profeed' keygen c1 --dir '$keys' 2>/dev/null"
mkdir -p "$keys/agents" "$keys/collectors" "$keys/analyzers"
cp "$keys/agent1.key" "$keys/agents/"
cp "$keys/c1.key" "$keys/collectors/"
cp "$keys/a1.key" "$keys/analyzers/"

farm_ports curve 4
farm_broker "tcp://127.0.0.1:${ports[0]}" "tcp://127.0.0.1:${ports[1]}" --curve-secret "$keys/broker.key_secret" \
  --agent-keys "$keys/agents" --collector-keys "$keys/collectors" --analyzer-keys "$keys/analyzers"
worker() { # worker PROGRAM NAME KEY [flags]
  local prog=$1 name=$2 key=$3
  shift 3
  "$build/$prog" --broker "$worker_ep" --worker-id "$name" --curve-secret "$keys/$key.key_secret" \
    --broker-key "$keys/broker.key" "${hb[@]}" "$@" >>"$dir/$name.log" 2>&1 &
  pids+=("$!")
}
worker collector/profeed-collector c1 c1 --replay "$map"
worker analyzer/profeed-analyzer a1 a1
as_agent=(--curve-secret "$keys/agent1.key_secret" --broker-key "$keys/broker.key")
registered() { # registered N
  for _ in $(seq 60); do
    n=$("$profeed" status --endpoint "$agent_ep" "${as_agent[@]}" --json --wait-ms 1000 2>/dev/null |
        grep -c '"worker_id"')
    [ "$n" -ge "$1" ] && return 0
    sleep 0.1
  done
  return 1
}
check "a collector and an analyzer with their keys register" registered 2

"$profeed" submit --endpoint "$agent_ep" "${as_agent[@]}" --language cuda --arch sm_90 --wait-s 30 \
  -- kernels all >"$dir/ok.out" 2>"$dir/ok.err"
check "an agent key submits and gets its feedback over CURVE" \
  bash -c "[ $? -eq 0 ] && grep -q '^1\. atomic_hist' '$dir/ok.out'"

refused_submit() { # refused_submit SECRET_NAME: exit 4 within the wait, no feedback
  "$profeed" submit --endpoint "$agent_ep" --curve-secret "$keys/$1.key_secret" --broker-key "$keys/broker.key" \
    --language cuda --arch sm_90 --wait-s 3 -- kernels all >"$dir/$1.out" 2>&1
  [ $? -eq 4 ] && ! grep -q atomic_hist "$dir/$1.out"
}
check "an unknown key cannot submit" refused_submit stranger
check "a collector key cannot submit" refused_submit c1
check "the broker logs the refused keys with the reason" \
  bash -c "grep -q 'agents from .*refused key .*not an agent key' '$dir/broker.log'"

"$profeed" submit --endpoint "$agent_ep" --language cuda --arch sm_90 --wait-s 3 -- kernels all \
  >"$dir/plain.out" 2>&1
check "plaintext to a CURVE endpoint gets nothing" bash -c "[ $? -eq 4 ] && ! grep -q atomic_hist '$dir/plain.out'"

worker collector/profeed-collector c-agent agent1 --replay "$map"
worker analyzer/profeed-analyzer a-as-c1 c1
sleep 2
check "an agent key cannot connect as a worker" \
  bash -c "grep -q 'workers from .*refused key .*not a collector or analyzer key' '$dir/broker.log' &&
           ! grep -q 'worker c-agent .* ready' '$dir/broker.log'"
check "a collector key cannot register as an analyzer" \
  bash -c "grep -q 'worker a-as-c1 .*may not register in the analyzer role' '$dir/broker.log' &&
           ! grep -q 'worker a-as-c1 .* ready' '$dir/broker.log'"

# Plaintext off this machine: refused unless --insecure.
"$profeed" submit --endpoint tcp://192.0.2.1:5555 --language cuda -- kernels all >"$dir/remote.out" 2>&1
rc=$?
check "plaintext to a remote broker is refused, naming --insecure" \
  bash -c "[ $rc -eq 2 ] && grep -q -- --insecure '$dir/remote.out'"
"$build/broker/profeed-broker" --agents "tcp://0.0.0.0:${ports[2]}" --workers "tcp://127.0.0.1:${ports[3]}" >"$dir/open.log" 2>&1 &
open_pid=$!
pids+=("$open_pid")
sleep 1
check "a plaintext broker on a reachable address refuses to start" \
  bash -c "! kill -0 $open_pid 2>/dev/null && grep -q -- --curve-secret '$dir/open.log'"
exit "$fail"
