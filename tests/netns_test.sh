#!/usr/bin/env bash
# A farm across hosts: netns_test.sh BUILD_DIR REPLAY_MAP
#
# Four network namespaces made here stand for four hosts, each with its own
# address on its own veth link to the broker host:
#
#   broker  10.77.1.1 --- 10.77.1.2  c1   (replay collector)
#           10.77.2.1 --- 10.77.2.2  c2   (replay collector)
#           10.77.3.1 --- 10.77.3.2  an   (analyzer; the agent runs here too)
#
# All of it over CURVE, each process with its own key (profeed keygen).
# Checks: workers on three hosts register with the broker; a job flows across
# the links; taking the link of the collector running a job down mid-job makes
# the broker notice through missed heartbeats and finish the job on the other
# host; bringing the link back up makes that collector rejoin and take work.
# Namespaces and processes are removed on exit, failure included. Exits 77
# (ctest: skipped) with the reason where namespaces cannot be made.
set -uo pipefail
build=$1
map=$2
profeed=$build/client/profeed
tag=pf$$
hosts=(broker c1 c2 an)
. "$(dirname "$0")/farm_lib.sh"
farm_scratch netns

ns() { echo "$tag-$1"; }

cleanup() {
  farm_stop_and_report
  for h in "${hosts[@]}"; do
    if ip netns list 2>/dev/null | grep -q "^$(ns "$h")\b"; then
      ip netns pids "$(ns "$h")" 2>/dev/null | xargs -r kill -KILL 2>/dev/null
      ip netns del "$(ns "$h")" 2>/dev/null
    fi
  done
  rm -rf "$dir"
}
trap cleanup EXIT

skip() { echo "SKIP: $*"; exit 77; }

# Can this machine make namespaces and veth links at all? (root, CAP_SYS_ADMIN,
# CAP_NET_ADMIN, the veth driver.) Probe once and skip cleanly otherwise.
command -v ip >/dev/null || skip "no 'ip' command (iproute2) to make network namespaces"
ip netns add "$(ns probe)" 2>"$dir/probe.err" ||
  skip "cannot make a network namespace here: $(head -1 "$dir/probe.err")"
ip -n "$(ns probe)" link add name pfa type veth peer name pfb 2>"$dir/probe.err"
probe_rc=$?
ip netns del "$(ns probe)"
[ "$probe_rc" -eq 0 ] || skip "cannot make a veth link here: $(head -1 "$dir/probe.err")"

for h in "${hosts[@]}"; do
  ip netns add "$(ns "$h")" || { echo "FAIL - ip netns add $(ns "$h")"; exit 1; }
  ip -n "$(ns "$h")" link set lo up
done
i=0
for h in c1 c2 an; do
  i=$((i + 1))
  ip -n "$(ns broker)" link add name "to-$h" type veth peer name eth0 netns "$(ns "$h")" || {
    echo "FAIL - veth link broker<->$h"; exit 1; }
  ip -n "$(ns broker)" addr add "10.77.$i.1/24" dev "to-$h"
  ip -n "$(ns "$h")" addr add "10.77.$i.2/24" dev eth0
  ip -n "$(ns broker)" link set "to-$h" up
  ip -n "$(ns "$h")" link set eth0 up
done
check "hosts reach the broker over their links" \
  bash -c "ip netns exec $(ns c1) ping -c1 -W2 10.77.1.1 >/dev/null 2>&1 ||
           ip netns exec $(ns c1) bash -c 'exec 3<>/dev/tcp/10.77.1.1/9 ' 2>&1 | grep -q refused"

hb=(--heartbeat-ms 200 --liveness 3)
# Across hosts the farm speaks CURVE: a key per process, the broker admitting
# each in its role (docs/security.md).
keys=$dir/keys
for name in broker c1 c2 an agent; do "$profeed" keygen "$name" --dir "$keys" >/dev/null; done
mkdir -p "$keys/agents" "$keys/collectors" "$keys/analyzers"
cp "$keys/agent.key" "$keys/agents/"
cp "$keys/c1.key" "$keys/c2.key" "$keys/collectors/"
cp "$keys/an.key" "$keys/analyzers/"
curve() { echo --curve-secret "$keys/$1.key_secret" --broker-key "$keys/broker.key"; }
# The broker binds every address of its host, as on a real machine.
ip netns exec "$(ns broker)" "$build/broker/profeed-broker" --agents "tcp://*:7101" \
  --workers "tcp://*:7102" "${hb[@]}" --max-attempts 3 --curve-secret "$keys/broker.key_secret" \
  --agent-keys "$keys/agents" --collector-keys "$keys/collectors" --analyzer-keys "$keys/analyzers" \
  >>"$dir/broker.log" 2>&1 &
pids+=("$!")
agent_ep=tcp://10.77.3.1:7101

start_collector() { # start_collector NAME LINK: a replay collector on host NAME
  ip netns exec "$(ns "$1")" "$build/collector/profeed-collector" --broker "tcp://$2:7102" \
    --worker-id "$1" --replay "$map" --pass-delay-ms 500 "${hb[@]}" $(curve "$1") >>"$dir/$1.log" 2>&1 &
  pids+=("$!")
}
start_collector c1 10.77.1.1
start_collector c2 10.77.2.1
ip netns exec "$(ns an)" "$build/analyzer/profeed-analyzer" --broker tcp://10.77.3.1:7102 \
  --worker-id an "${hb[@]}" $(curve an) >>"$dir/an.log" 2>&1 &
pids+=("$!")

agent() { # agent SUBCOMMAND ARGS...: profeed on the analyzer host, with the agent's key
  local sub=$1
  shift
  ip netns exec "$(ns an)" "$profeed" "$sub" $(curve agent) "$@"
}
status_json() { agent status --endpoint "$agent_ep" --json 2>/dev/null | tr -d ' \n'; }
wait_listed() { # wait_listed WORKER_ID...: until the broker lists all of them
  for _ in $(seq 150); do
    local s ok=1
    s=$(status_json)
    for w in "$@"; do grep -q "\"worker_id\":\"$w\"" <<<"$s" || ok=0; done
    [ "$ok" -eq 1 ] && return 0
    sleep 0.1
  done
  return 1
}
running_collector() { # running_collector JOB: the collector whose log says it started JOB
  # (not the broker's busy count: a collector that just finished the previous job can still
  # count as busy there for a moment, and cutting it would test nothing)
  for w in c1 c2; do
    grep -q "job $1: attempt [0-9]* started" "$dir/$w.log" 2>/dev/null && { echo "$w"; return; }
  done
}
submit() { # submit OUT CAPTURE [flags]: in the background on the analyzer host
  local out=$1 prog=$2
  shift 2
  agent submit --endpoint "$agent_ep" --language cuda --arch sm_90 --wait-s 60 "$@" -- "$prog" \
    >"$dir/$out.out" 2>"$dir/$out.err" &
  eval "job_$out=$!"
}

check "collectors on two hosts and an analyzer on a third register" wait_listed c1 c2 an

# 1. A job across the links.
submit first raw --job-id netns-first
wait "$job_first"; rc=$?
check "a job flows across the hosts" bash -c "[ $rc -eq 0 ] && grep -q raw_metrics.csv '$dir/first.out'"

# 2. The link of the collector running a job goes down mid-job (3 passes x 500 ms).
submit cut kernels --job-id netns-cut
victim=
for _ in $(seq 40); do victim=$(running_collector netns-cut); [ -n "$victim" ] && break; sleep 0.05; done
check "a collector is running the job" [ -n "$victim" ]
[ -n "$victim" ] || victim=c1
ip -n "$(ns "$victim")" link set eth0 down
cut_at=$(date +%s.%N)
wait "$job_cut"; rc=$?
check "link down mid-job: the job completes on the other host" \
  bash -c "[ $rc -eq 0 ] && grep -q '^1\. atomic_hist' '$dir/cut.out'"
check "link down mid-job: the broker noticed through heartbeats" \
  grep -q "job netns-cut: collector died" "$dir/broker.log"
listed_after_cut=$(status_json)
check "link down: the broker no longer lists $victim" \
  bash -c "! grep -q '\"worker_id\":\"$victim\"' <<<'$listed_after_cut'"
echo "     (job finished $(echo "$(date +%s.%N) - $cut_at" | bc 2>/dev/null || echo '?') s after the cut)"

# 3. The link comes back: the collector rejoins and takes work again.
ip -n "$(ns "$victim")" link set eth0 up
check "link up: $victim rejoins" wait_listed "$victim"
other=c1; [ "$victim" = c1 ] && other=c2
# Take the other collector's link down so the next job can only run on the one that rejoined.
ip -n "$(ns "$other")" link set eth0 down
for _ in $(seq 50); do status_json | grep -q "\"worker_id\":\"$other\"" || break; sleep 0.1; done
submit back full --job-id netns-back
wait "$job_back"; rc=$?
check "the rejoined collector runs a job" \
  bash -c "[ $rc -eq 0 ] && grep -q full_details.csv '$dir/back.out' && grep -q 'netns-back' '$dir/$victim.log'"

exit $fail
