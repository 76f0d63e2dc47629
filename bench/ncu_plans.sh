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

# The default "core" plan's metrics come from the one list in analyzer/ncu/ncu_plan.c,
# printed by the collector (PROFEED_COLLECTOR, else the build tree's), so what is
# measured here is what the farm runs.
collector=${PROFEED_COLLECTOR:-$root/build/collector/profeed-collector}
core=$("$collector" --print-metrics core) || {
  echo "bench/ncu_plans.sh: cannot read the core plan from $collector (build it, or set PROFEED_COLLECTOR)" >&2
  exit 2
}

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
