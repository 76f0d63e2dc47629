#!/usr/bin/env bash
# deploy/plan-passes.sh [--kernel NAME] [--group N]: on a GPU host with Nsight Compute, counts the
# replay passes the default (core) plan costs on one kernel of tests/fixtures/ncu/h200/kernels.cu
# (default vec_add, the quickest), and what its metrics add: the plan as it is, the plan without
# its --section arguments, the plan without each run of N consecutive metrics (default 5), and,
# inside each run whose removal saves a pass, the plan without each of its metrics. A metric whose
# removal saves a pass is what the plan's cost buys; each line ("passes WITHOUT") is printed as it
# is measured. Passes, not wall time, are what the ncu overhead scales with, and they do not vary
# from run to run.
# GPU clocks are never touched (--clock-control none). Needs nvcc and ncu on PATH.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
kernel=vec_add
group=5
while [ $# -gt 0 ]; do
  case "$1" in
    --kernel) kernel=$2; shift ;;
    --group) group=$2; shift ;;
    -h|--help) sed -n "2,11p" "$0"; exit 0 ;;
    *) echo "plan-passes: unknown argument $1" >&2; exit 2 ;;
  esac
  shift
done
command -v ncu >/dev/null || { echo "plan-passes: ncu is not on PATH" >&2; exit 2; }
work=$(mktemp -d /tmp/plan-passes.XXXXXX)
trap 'rm -rf "$work"' EXIT
nvcc -O3 -arch=sm_90 -o "$work/kernels" "$root/tests/fixtures/ncu/h200/kernels.cu" || exit 1
metrics=$(bash "$root/deploy/core-metrics.sh") || exit 2
read -r -a sections <<< "$(bash "$root/deploy/core-metrics.sh" --sections)"

# passes METRICS [ARGS...]: the replay passes ncu reports for the kernel.
passes() {
  local list=$1
  shift
  ncu --clock-control none -k "$kernel" -c 1 --metrics "$list" "$@" "$work/kernels" "$kernel" 2>&1 |
    sed -n 's/.*- \([0-9]*\) passes.*/\1/p' | head -1
}
base=$(passes "$metrics" "${sections[@]}")
printf '%s (plan)\n' "$base"
printf '%s (no sections)\n' "$(passes "$metrics")"
printf '%s (the MemoryWorkloadAnalysis section alone)\n' "$(passes gpu__time_duration.sum "${sections[@]}")"
IFS=, read -r -a all <<< "$metrics"
# without FROM COUNT: the plan's metrics less COUNT of them from index FROM, comma-separated.
without() { printf '%s\n' "${all[@]}" | sed "$(($1 + 1)),$(($1 + $2))d" | paste -sd, -; }
for ((g = 0; g < ${#all[@]}; g += group)); do
  p=$(passes "$(without "$g" "$group")" "${sections[@]}")
  printf '%s without metrics %d-%d (%s ...)\n' "$p" "$((g + 1))" "$((g + group))" "${all[$g]}"
  [ -n "$p" ] && [ "$p" -lt "$base" ] || continue
  for ((i = g; i < g + group && i < ${#all[@]}; i++)); do
    printf '  %s without %s\n' "$(passes "$(without "$i" 1)" "${sections[@]}")" "${all[$i]}"
  done
done
