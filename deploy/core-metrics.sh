#!/usr/bin/env bash
# deploy/core-metrics.sh: prints the default (core) plan's ncu metric list, comma-separated,
# from the source (analyzer/ncu/ncu_plan.c), for the GPU scripts that run ncu themselves on a
# host without a build (gpu-corpus.sh, gpu-source.sh). ctest's gpu_scripts_check compares it
# with `profeed-collector --print-metrics core`, so a moved or renamed list fails there, not on
# the GPU host. Exit 2 when no list is found.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
list=$(sed -n '/s_core_metrics\[\] = {/,/NULL,/p' "$root/analyzer/ncu/ncu_plan.c" |
  grep -o '"[a-z0-9_.]*"' | tr -d '"' | paste -sd, -)
[ -n "$list" ] || { echo "core-metrics: no s_core_metrics list in analyzer/ncu/ncu_plan.c" >&2; exit 2; }
echo "$list"
