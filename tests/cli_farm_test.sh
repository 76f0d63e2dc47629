#!/usr/bin/env bash
# What an agent sees from `profeed submit` when the farm is not there, goes
# away, cannot run its job, or is asked to shape the feedback (issue 16):
# cli_farm_test.sh BUILD_DIR REPLAY_MAP
#
#  1. no broker behind a TCP port: "no answer from the broker at ..." in a
#     few seconds (also with --wait-s); a broker killed mid-job: said on
#     stderr, reconnected to when it is back, and the job completes;
#  2. a job submitted in the broker's start-up grace with no collector ever
#     coming is refused when the grace ends, not after its time limit;
#  3. --language sycl on an NVIDIA-only farm: "no collector offers sycl";
#  5. --format markdown, --max-chars, --max-tokens, --top and --min-share reach the analyzer;
#     --source adds the (recorded) source pass;
#  7. the broker's worker endpoint given to an agent says so.
# The broker listens on ipc:// (TCP is not the point); the one TCP port used
# is one of 36400..36499 that nobody listens on.
set -uo pipefail
build=$1
map=$2
profeed=$build/client/profeed
fixtures=$(cd "$(dirname "$map")/.." && pwd)
. "$(dirname "$0")/farm_lib.sh"
farm_scratch cli

hb=(--heartbeat-ms 200 --liveness 3)

free_port() { # a loopback port of 36400..36499 nobody listens on
  local p
  for p in $(seq 36400 36499); do
    (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null || { echo "$p"; return 0; }
  done
  return 1
}
now_ms() { echo $((${EPOCHREALTIME/./} / 1000)); }
timed() { # timed NAME LIMIT_S ARGS...: profeed ARGS with a hard limit; sets rc and took_ms
  local name=$1 limit=$2
  shift 2
  local t0
  t0=$(now_ms)
  timeout -s KILL "$limit" "$profeed" "$@" >"$dir/$name.out" 2>"$dir/$name.err"
  rc=$?
  took_ms=$(($(now_ms) - t0))
}
start_workers() { # start_workers PASS_DELAY_MS [analyzer]: a collector (and an analyzer)
  "$build/collector/profeed-collector" --broker "$worker_ep" --worker-id c1 --replay "$map" \
    --pass-delay-ms "$1" "${hb[@]}" >>"$dir/c1.log" 2>&1 &
  collector_pid=$!
  pids+=("$collector_pid")
  if [ $# -gt 1 ]; then
    "$build/analyzer/profeed-analyzer" --broker "$worker_ep" --worker-id a1 "${hb[@]}" >>"$dir/a1.log" 2>&1 &
    pids+=("$!")
  fi
  for _ in $(seq 100); do
    [ "$("$profeed" status --endpoint "$agent_ep" --json 2>/dev/null | grep -c '"worker_id"')" -ge 2 ] && return 0
    sleep 0.1
  done
  return 1
}

# 1. No broker at all.
port=$(free_port)
check "a free loopback port for the absent broker" [ -n "$port" ]
timed none 30 submit --endpoint "tcp://127.0.0.1:$port" --language cuda -- kernels all
check "no broker: exit 4" [ "$rc" -eq 4 ]
check "no broker: said within 6 s (took ${took_ms} ms)" [ "$took_ms" -lt 6000 ]
check "no broker: \"no answer from the broker at tcp://127.0.0.1:$port\"" \
  grep -q "no answer from the broker at tcp://127.0.0.1:$port" "$dir/none.err"
timed none_wait 30 submit --endpoint "tcp://127.0.0.1:$port" --wait-s 5 --language cuda -- kernels all
check "no broker, --wait-s 5: exit 4 saying the broker did not answer" \
  bash -c "[ $rc -eq 4 ] && grep -q 'no answer from the broker' '$dir/none_wait.err'"

# 2. A job in the start-up grace with no collector ever coming. The broker
# waits for live workers to come back for 100 ms x (3 + 32) + 1 s = 4.5 s.
farm_broker "ipc://$dir/grace-agents" "ipc://$dir/grace-workers" --heartbeat-ms 100
timed grace 30 submit --endpoint "$agent_ep" --language cuda --timeout-s 60 -- kernels all
check "queued in the grace, no collector: exit 4" [ "$rc" -eq 4 ]
check "... refused once workers had the time to return, not after its 60 s limit (took ${took_ms} ms)" \
  bash -c "[ $took_ms -ge 4000 ] && [ $took_ms -lt 10000 ]"
check "... saying no collector is registered" grep -q "no collector is registered" "$dir/grace.err"
kill -TERM "$broker_pid"
wait "$broker_pid" 2>/dev/null
farm_broker "ipc://$dir/agents" "ipc://$dir/workers"

# 3, 5, 7 on a farm with one NVIDIA replay collector.
check "a replay collector and an analyzer register" start_workers 0 analyzer
timed sycl 30 submit --endpoint "$agent_ep" --language sycl -- kernels all
check "sycl on an NVIDIA farm: exit 4, \"no collector offers sycl\"" \
  bash -c "[ $rc -eq 4 ] && grep -q 'no collector offers sycl' '$dir/sycl.err'"
timed sycl_ncu 30 submit --endpoint "$agent_ep" --language sycl --profiler ncu -- kernels all
check "sycl with --profiler ncu: exit 2, ncu does not suit sycl" \
  bash -c "[ $rc -eq 2 ] && grep -q \"unknown profiler 'ncu' for language 'sycl'\" '$dir/sycl_ncu.err'"

timed md 30 submit --endpoint "$agent_ep" --language cuda --format markdown -- kernels all
check "--format markdown: Markdown from the farm" \
  bash -c "[ $rc -eq 0 ] && head -1 '$dir/md.out' | grep -q '^# profeed feedback'"
timed chars 30 submit --endpoint "$agent_ep" --language cuda --max-chars 600 -- kernels all
check "--max-chars 600: at most 600 characters, saying what was left out or cut" \
  bash -c "[ $rc -eq 0 ] && [ \$(head -c -1 '$dir/chars.out' | wc -c) -le 600 ] && grep -Eq 'left out|cut to fit the length limit' '$dir/chars.out'"
timed tokens 30 submit --endpoint "$agent_ep" --language cuda --max-tokens 150 -- corpus_v2
check "--max-tokens 150: far shorter than the whole feedback, saying what was left out or cut" \
  bash -c "[ $rc -eq 0 ] && [ \$(wc -c < '$dir/tokens.out') -le 700 ] && grep -Eq 'left out|cut to fit the length limit' '$dir/tokens.out'"
timed nosource 30 submit --endpoint "$agent_ep" --language cuda --min-share 0 -- corpus_v2
timed source 30 submit --endpoint "$agent_ep" --language cuda --min-share 0 --source -- corpus_v2
check "--source: the recorded source pass replayed, findings name their lines (line 62 of smem_stride4)" \
  bash -c "[ $rc -eq 0 ] && grep -q 'Where: line 62 ' '$dir/source.out' && grep -qF 'acc += s[(lane * 4 + w + i)' '$dir/source.out'"
check "... and without --source no source pass and no lines" bash -c "! grep -q 'Where:' '$dir/nosource.out'"
timed top 30 submit --endpoint "$agent_ep" --language cuda --top 1 --min-share 0 -- kernels all
check "--top 1: one kernel analyzed" bash -c "[ $rc -eq 0 ] && [ \$(grep -c '^[0-9]*\. ' '$dir/top.out') -eq 1 ]"
timed share 30 submit --endpoint "$agent_ep" --language cuda --min-share 20 -- kernels all
"$profeed" analyze --min-share 20 "$fixtures"/ncu/h200/pass{1_sol,2_memory,3_warps_occupancy}.csv >"$dir/share_offline.out"
check "--min-share 20: the kernels profeed analyze --min-share 20 analyzes" \
  bash -c "[ $rc -eq 0 ] && diff <(grep '^[0-9]*\. ' '$dir/share.out') <(grep '^[0-9]*\. ' '$dir/share_offline.out') &&
           [ \$(grep -c '^[0-9]*\. ' '$dir/share.out') -ge 1 ]"
timed share_all 30 submit --endpoint "$agent_ep" --language cuda --min-share 100 -- kernels all
check "--min-share 100: no kernel analyzed, and said" \
  bash -c "[ $rc -eq 0 ] && ! grep -q '^[0-9]*\. ' '$dir/share_all.out' && grep -q 'below the 100% threshold' '$dir/share_all.out'"

timed workers_port 30 submit --endpoint "$worker_ep" --language cuda -- kernels all
check "the worker endpoint given to submit: exit 2, saying it is the worker endpoint" \
  bash -c "[ $rc -eq 2 ] && grep -q \"the broker's worker endpoint\" '$dir/workers_port.err'"
timed workers_status 30 status --endpoint "$worker_ep"
check "... and to status" bash -c "[ $rc -eq 2 ] && grep -q \"the broker's worker endpoint\" '$dir/workers_status.err'"

# 1b. The broker dies mid-job (3 passes x 1.5 s) and comes back.
kill -KILL "$collector_pid"
wait "$collector_pid" 2>/dev/null
start_workers 1500 >/dev/null
"$profeed" submit --endpoint "$agent_ep" --language cuda --wait-s 90 -- kernels all \
  >"$dir/lost.out" 2>"$dir/lost.err" &
agent=$!
sleep 1.5
kill -KILL "$broker_pid"
wait "$broker_pid" 2>/dev/null
for _ in $(seq 80); do grep -q "has not answered" "$dir/lost.err" && break; sleep 0.1; done
check "broker killed mid-job: the agent says so on stderr" grep -q "the broker at $agent_ep has not answered" "$dir/lost.err"
farm_broker "$agent_ep" "$worker_ep"
wait "$agent"
rc=$?
check "... and once it is back the job completes (exit $rc)" \
  bash -c "[ $rc -eq 0 ] && grep -q '^1\. atomic_hist' '$dir/lost.out'"

exit $fail
