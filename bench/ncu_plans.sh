#!/usr/bin/env bash
# bench/ncu_plans.sh OUTDIR: what each candidate Nsight Compute pass plan costs on
# this GPU host, for the nine ground-truth kernels of tests/fixtures/ncu/h200/kernels.cu.
#
# For every plan it records the wall time of the profiled run and writes the raw
# page (which carries profiler__replayer_passes per launch) to OUTDIR/plan_<name>.csv;
# the uninstrumented run is the baseline, so overhead = plan - baseline.
# bench/ncu_plans_check.sh then analyzes each CSV with profeed and compares the
# first finding of every kernel with the ground truth. GPU clocks are never touched
# (--clock-control none). Needs nvcc and ncu on PATH; runs in a few minutes.
set -euo pipefail
out=${1:?usage: bench/ncu_plans.sh OUTDIR}
root=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$out"
export LC_ALL=C
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

echo "== building kernels.cu (nvcc -O3 -arch=sm_90)"
nvcc -O3 -arch=sm_90 -o "$work/kernels" "$root/tests/fixtures/ncu/h200/kernels.cu"

# The metrics the profeed analyzer keeps (analyzer/ncu/ncu_metrics.c) are one
# candidate plan: ask for exactly what the analysis reads.
metrics=$(grep -oE '"(smsp|sm|l1tex|lts|dram|gpu|gpc|launch|device|derived|memory|sass)__?[a-z0-9_.]+"' \
            "$root/analyzer/ncu/ncu_metrics.c" | tr -d '"' | sort -u |
            grep -v '^device__\|^launch__\|^derived__\|^memory_\|^sass__' | paste -sd, -)
# (launch__/device__ columns come with every raw page; derived__ and the
# SourceCounters-only names are section-derived: ncu 2025.3.1 refuses them in
# --metrics with "Failed to find metric" and stops the run.)

# The smallest set that decides the primary finding (docs/ncu.md): speed of light
# per unit, duration, sector use, bank conflicts, occupancy, atomics, stalls.
core="gpu__time_duration.sum,sm__throughput.avg.pct_of_peak_sustained_elapsed"
core+=",gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed"
core+=",gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed,l1tex__throughput.avg.pct_of_peak_sustained_active"
core+=",lts__throughput.avg.pct_of_peak_sustained_elapsed"
core+=",smsp__sass_average_data_bytes_per_sector_mem_global_op_ld.ratio"
core+=",smsp__sass_average_data_bytes_per_sector_mem_global_op_st.ratio"
core+=",l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum"
core+=",l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum"
core+=",sm__warps_active.avg.pct_of_peak_sustained_active,sm__maximum_warps_per_active_cycle_pct"
core+=",smsp__inst_executed_op_global_red.sum,lts__d_atomic_input_cycles_active.avg.pct_of_peak_sustained_elapsed"
core+=",l1tex__t_sector_hit_rate.pct,lts__t_sector_hit_rate.pct,dram__bytes_read.sum,dram__bytes_write.sum"
core+=",smsp__average_warp_latency_per_inst_issued.ratio,smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio"
core+=",smsp__average_warps_issue_stalled_mio_throttle_per_issue_active.ratio,smsp__average_warps_issue_stalled_short_scoreboard_per_issue_active.ratio"
core+=",sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active,sm__sass_thread_inst_executed_op_ffma_pred_on.sum.peak_sustained"

declare -A plans=(
  [full]="--set full"
  [detailed]="--set detailed"
  [sol]="--section SpeedOfLight"
  [five]="--section SpeedOfLight --section MemoryWorkloadAnalysis --section WarpStateStats --section Occupancy --section LaunchStats"
  [sol_tables]="--section SpeedOfLight --section MemoryWorkloadAnalysis_Tables --section Occupancy"
  [profeed_all]="--metrics $metrics"
  [profeed_core]="--metrics $core"
)

now() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", b - a }'; }
printf 'plan\tseconds\n' > "$out/timings.tsv"
echo "== uninstrumented run"
"$work/kernels" all > /dev/null   # warm-up: first CUDA context creation, page cache
t0=$(now); "$work/kernels" all > /dev/null; t1=$(now)
printf 'none\t%s\n' "$(elapsed "$t0" "$t1")" | tee -a "$out/timings.tsv"
for name in sol profeed_core sol_tables five profeed_all detailed full; do
  echo "== plan $name"
  # shellcheck disable=SC2086
  t0=$(now)
  rc=0
  ncu --clock-control none --target-processes all --csv --page raw ${plans[$name]} \
      --log-file "$out/plan_$name.csv" "$work/kernels" all > /dev/null || rc=$?
  t1=$(now)
  printf '%s\t%s\n' "$name" "$(elapsed "$t0" "$t1")" | tee -a "$out/timings.tsv"
  if [ $rc -ne 0 ]; then
    echo "   ncu exited $rc:"; grep '==ERROR==' "$out/plan_$name.csv" | head -3
  fi
done
ncu --version > "$out/ncu_version.txt"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv > "$out/gpu.txt"
echo "== done: $out"
