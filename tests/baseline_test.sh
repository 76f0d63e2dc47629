#!/usr/bin/env bash
# A job compared with an earlier one (issue 19, docs/baselines.md), on real
# processes: a broker with a journal, a replay collector and an analyzer.
#  1. job 2 with --baseline-job of job 1 (the same kernels, captured again)
#     opens with the change, kernel by kernel, and carries a manifest;
#  2. a baseline that is unknown, another agent's, or itself gets a note and
#     the job its plain feedback;
#  3. kernels that are in only one of the two are listed as appeared and
#     disappeared;
#  4. after a kill -9 and restart of the broker, job 1 still serves as a
#     baseline (its feedback came back from the journal's FINISHED record);
#  5. a baseline still collecting is said to be not finished.
#
#   tests/baseline_test.sh BUILD_DIR REPLAY_MAP
set -u
build=$1
map=$2
. "$(dirname "$0")/farm_lib.sh"
farm_scratch_kept baseline
profeed=$build/client/profeed
hb=(--heartbeat-ms 200 --liveness 3)
agents="ipc://$dir/agents"
workers="ipc://$dir/workers"

workers_start() {
  "$build/collector/profeed-collector" --broker "$worker_ep" --worker-id c1 --replay "$map" "${hb[@]}" \
    >>"$dir/c1.log" 2>&1 &
  c1_pid=$!
  pids+=("$!")
  "$build/analyzer/profeed-analyzer" --broker "$worker_ep" --worker-id a1 "${hb[@]}" >>"$dir/a1.log" 2>&1 &
  pids+=("$!")
}
logged() { # logged PATTERN N: until the broker's log has N lines matching PATTERN (20 s at most)
  for _ in $(seq 200); do [ "$(grep -c "$1" "$dir/broker.log")" -ge "$2" ] && return 0; sleep 0.1; done
  return 1
}
submit() { # submit NAME JOB_ID PROGRAM [flags]: the feedback in $dir/NAME.out
  local name=$1 id=$2 program=$3
  shift 3
  "$profeed" submit --endpoint "$agent_ep" --language cuda --arch sm_90 --job-id "$id" --wait-s 30 "$@" \
    -- "$program" >"$dir/$name.out" 2>"$dir/$name.err"
}

farm_broker "$agents" "$workers" --state-dir "$dir/state"
workers_start
logged "worker c1 .* ready" 1 && logged "worker a1 .* ready" 1 || farm_die "the workers did not register"
submit round1 job-r1 round1 --agent-id loop
check "round 1 gets its feedback, with a manifest" \
  bash -c "grep -q '^1\. local_array_dyn' '$dir/round1.out' && grep -q '^Manifest: gpu NVIDIA H200; .* plan default; profeed ' '$dir/round1.out'"
check "round 1 has no comparison" bash -c "! grep -q 'Change since' '$dir/round1.out'"

submit round2 job-r2 round2 --agent-id loop --baseline-job job-r1
check "round 2 opens with the change since round 1" \
  grep -q "^Change since baseline job job-r1: within noise, +0.2% time over 5 matched kernels (noise +-2.0%)" \
  "$dir/round2.out"
check "round 2 names each kernel's change, limiter and findings" \
  grep -q "^- stream_one_warp(const float \*, float \*, unsigned long): 1.54 ms -> 1.49 ms per launch (-3.1%, noise +-2.0% by default): improved; limiter small_grid -> small_grid" \
  "$dir/round2.out"
check "round 2 says what resolved and what is new" \
  grep -q "^- barrier_heavy(float \*, int): .*limiter compute_bound -> barrier_stall; resolved: compute_bound; new: barrier_stall" \
  "$dir/round2.out"
check "round 2 still has its own findings" grep -q "^1\. local_array_dyn" "$dir/round2.out"

submit json job-r2j round2 --agent-id loop --baseline-job job-r1 --format json
check "the JSON carries the comparison and the manifest" \
  python3 -c "
import json, sys
d = json.load(open('$dir/json.out'))
c = d['comparison']
assert c['baseline'] == 'job job-r1' and c['problem'] is None, c
assert c['verdict'] == 'within noise' and len(c['kernels']) == 5, c
k = [k for k in c['kernels'] if k['name'].startswith('stream_one_warp')][0]
assert k['verdict'] == 'improved' and k['matched_by'] == 'name' and k['noise_source'] == 'default', k
assert d['manifest']['gpu'] == 'NVIDIA H200' and d['manifest']['plan'] == 'default', d['manifest']
"

submit unknown job-u round2 --agent-id loop --baseline-job no-such-job
check "an unknown baseline is said, and the job gets its plain feedback" \
  bash -c "grep -q '^Change since baseline job no-such-job: not compared: job no-such-job is not known to the broker' '$dir/unknown.out' && grep -q '^1\. local_array_dyn' '$dir/unknown.out'"
submit foreign job-f round2 --agent-id intruder --baseline-job job-r1
check "another agent's job is not a baseline, and the job gets its plain feedback" \
  bash -c "grep -q 'not compared: job job-r1 is not this agent' '$dir/foreign.out' && grep -q '^1\. local_array_dyn' '$dir/foreign.out' && ! grep -q 'per launch' '$dir/foreign.out'"
submit self job-s round2 --agent-id loop --baseline-job job-s
check "a job is not its own baseline" grep -q "not compared: a job cannot be its own baseline" "$dir/self.out"

submit other job-o other --agent-id loop --baseline-job job-r1
check "kernels of only one side are listed as appeared and disappeared" \
  bash -c "grep -q '^- appeared (analyzed now, not in the baseline.s analysis: new, or under its time-share cut): ' '$dir/other.out' && grep -q '^- disappeared (in the baseline.s analysis, not analyzed now: gone, or under the time-share cut): .*local_array_dyn' '$dir/other.out'"

# The broker dies without a word; the journal has job-r1's feedback.
kill -KILL "$broker_pid"
wait "$broker_pid" 2>/dev/null
farm_broker "$agents" "$workers" --state-dir "$dir/state"
logged "worker c1 .* ready" 2 && logged "worker a1 .* ready" 2 || farm_die "the workers did not come back"
submit after job-r3 round2 --agent-id loop --baseline-job job-r1
check "after a broker kill -9, round 1 is still a baseline" \
  grep -q "^Change since baseline job job-r1: within noise" "$dir/after.out"

# A collector with two slots whose passes take 1.5 s each: the three-pass
# job is still collecting when the one-pass job that names it is analyzed.
kill -TERM "$c1_pid"
"$build/collector/profeed-collector" --broker "$worker_ep" --worker-id c2 --replay "$map" --slots 2 \
  --pass-delay-ms 1500 "${hb[@]}" >>"$dir/c2.log" 2>&1 &
pids+=("$!")
logged "worker c1 .* lost" 1 && logged "worker c2 .* ready" 1 || farm_die "c1 was not replaced by c2"
submit slow job-slow slow --agent-id loop &
slow_pid=$!
logged "job job-slow: attempt 1 on collector c2" 1 || farm_die "job-slow did not start on c2"
submit early job-early round2 --agent-id loop --baseline-job job-slow
wait "$slow_pid"
check "a baseline still collecting is not finished, and the job gets its plain feedback" \
  bash -c "grep -q 'not compared: job job-slow has not finished yet (collecting)' '$dir/early.out' && grep -q '^1\. local_array_dyn' '$dir/early.out'"
exit "$fail"
