#!/usr/bin/env bash
# Intel jobs across the farm (issue 17), on real processes: a broker, a replay
# collector serving tests/fixtures/replay/intel.map (recorded unitrace and
# VTune captures) and an analyzer.
#  1. the collector offers the profilers its map records, so a SYCL job (whose
#     profilers are unitrace and VTune) is accepted, not refused;
#  2. a unitrace capture comes back analyzed by the unitrace backend, marked as
#     replayed, with the findings `profeed analyze` gives for the same files on
#     the GPU the collector names;
#  3. a VTune capture likewise, by the VTune backend.
#
#   tests/intel_replay_test.sh BUILD_DIR REPLAY_MAP
set -u
build=$1
map=$2
. "$(dirname "$0")/farm_lib.sh"
farm_scratch_kept intel_replay
profeed=$build/client/profeed
fixtures=$(cd "$(dirname "$map")/../intel" && pwd)
hb=(--heartbeat-ms 200 --liveness 3)

farm_broker "ipc://$dir/agents" "ipc://$dir/workers"
"$build/collector/profeed-collector" --broker "$worker_ep" --worker-id c1 --replay "$map" \
  --gpu "Intel Arc B580:xe2" "${hb[@]}" >>"$dir/c1.log" 2>&1 &
pids+=("$!")
"$build/analyzer/profeed-analyzer" --broker "$worker_ep" --worker-id a1 "${hb[@]}" >>"$dir/a1.log" 2>&1 &
pids+=("$!")
for _ in $(seq 200); do
  [ "$(grep -c "worker .* ready" "$dir/broker.log")" -ge 2 ] && break
  sleep 0.1
done
submit() { # submit NAME PROGRAM [flags]: the feedback in $dir/NAME.out
  local name=$1 program=$2
  shift 2
  "$profeed" submit --endpoint "$agent_ep" --job-id "job-$name" --wait-s 30 "$@" -- "$program" \
    >"$dir/$name.out" 2>"$dir/$name.err"
}

submit sycl b580 --language sycl --arch xe2
"$profeed" analyze --device "Intel Arc B580" "$fixtures"/unitrace_b580/* >"$dir/sycl.offline" 2>&1
check "a SYCL job is accepted and its unitrace capture analyzed by the unitrace backend" \
  grep -q "^profeed feedback (Intel unitrace, Intel Arc B580) REPLAYED from a recorded capture, not measured now: 8 kernels, 32 launches, 19.60 ms profiled; status: ok" "$dir/sycl.out"
check "the farm's unitrace findings are the offline ones" \
  bash -c "diff <(grep -E '^ *([0-9]+\.|[a-z]\)) ' '$dir/sycl.offline') <(grep -E '^ *([0-9]+\.|[a-z]\)) ' '$dir/sycl.out')"

submit vtune kf_hotspots --language sycl --profiler vtune
"$profeed" analyze --device "Intel Arc B580" "$fixtures"/vtune/kf_pass1_full.tsv >"$dir/vtune.offline" 2>&1
check "a VTune capture is analyzed by the VTune backend" \
  grep -q "^profeed feedback (Intel VTune, Intel Arc B580) REPLAYED from a recorded capture, not measured now: 8 kernels, 704 launches, 211.90 ms profiled; status: ok" "$dir/vtune.out"
check "the farm's VTune findings are the offline ones" \
  bash -c "diff <(grep -E '^ *([0-9]+\.|[a-z]\)) ' '$dir/vtune.offline') <(grep -E '^ *([0-9]+\.|[a-z]\)) ' '$dir/vtune.out')"
exit "$fail"
