#!/usr/bin/env bash
# deploy/core-metrics.sh [--sections|--full]: prints the default (core) plan's ncu metric list,
# comma-separated, from the source (analyzer/ncu/ncu_plan.c), for the GPU scripts that run ncu
# themselves on a host without a build (gpu-corpus.sh, gpu-source.sh); with --sections, the
# arguments the plan adds beside the metrics ("--section MemoryWorkloadAnalysis"), space-separated;
# with --full, the metrics the full plan adds to --set full, comma-separated.
# ctest's gpu_scripts_check compares each with what the collector runs (`profeed-collector
# --print-metrics core`, `--print-plan ncu:core`, `--print-plan ncu:full`), so a moved or
# renamed list fails there, not on the GPU host. Exit 2 when no list is found.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
if [ "${1:-}" = --sections ]; then
  args=$(sed -n 's/.*s_core_section_args\[\] = {\(.*\)};.*/\1/p' "$root/analyzer/ncu/ncu_plan.c" |
    grep -o '"[^"]*"' | tr -d '"' | paste -sd' ' -)
  [ -n "$args" ] || { echo "core-metrics: no s_core_section_args in analyzer/ncu/ncu_plan.c" >&2; exit 2; }
  echo "$args"
  exit 0
fi
array=s_core_metrics
[ "${1:-}" = --full ] && array=s_full_metrics
list=$(sed -n "/$array\[\] = {/,/NULL,/p" "$root/analyzer/ncu/ncu_plan.c" |
  grep -o '"[a-z0-9_.]*"' | tr -d '"' | paste -sd, -)
[ -n "$list" ] || { echo "core-metrics: no $array list in analyzer/ncu/ncu_plan.c" >&2; exit 2; }
echo "$list"
