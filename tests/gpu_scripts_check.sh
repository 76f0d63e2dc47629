#!/usr/bin/env bash
# gpu_scripts_check BUILD_DIR: the GPU scripts (deploy/gpu-corpus.sh, gpu-source.sh) run ncu with
# the core plan's metric list read from the source by deploy/core-metrics.sh; it must be the
# list the collector runs (profeed-collector --print-metrics core), and the scripts must parse.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=$1
fail=0
check() { # check NAME CMD...
  local name=$1
  shift
  if "$@"; then echo "ok   - $name"; else echo "FAIL - $name"; fail=1; fi
}
from_source=$(bash "$root/deploy/core-metrics.sh")
from_collector=$("$build/collector/profeed-collector" --print-metrics core)
check "deploy/core-metrics.sh prints the collector's core list" [ "$from_source" = "$from_collector" ]
sections=$(bash "$root/deploy/core-metrics.sh" --sections)
check "deploy/core-metrics.sh --sections prints the core pass's section arguments" \
  grep -q -- " --metrics [^ ]* $sections PROGRAM" <<< "$("$build/collector/profeed-collector" --print-plan ncu:core)"
full=$(bash "$root/deploy/core-metrics.sh" --full)
check "deploy/core-metrics.sh --full prints what the full plan adds to --set full" \
  grep -q -- "--set full --metrics $full " <<< "$("$build/collector/profeed-collector" --print-plan ncu:full)"
for s in gpu-corpus gpu-source gpu-smoke gpu-bundle gpu-metric-probe core-metrics; do
  check "deploy/$s.sh parses" bash -n "$root/deploy/$s.sh"
done
check "gpu-corpus.sh reads the list through core-metrics.sh" grep -q 'deploy/core-metrics.sh' "$root/deploy/gpu-corpus.sh"
check "gpu-source.sh reads the list through core-metrics.sh" grep -q 'deploy/core-metrics.sh' "$root/deploy/gpu-source.sh"
check "gpu-corpus.sh reads the sections through core-metrics.sh" grep -q 'core-metrics.sh" --sections' "$root/deploy/gpu-corpus.sh"
check "gpu-source.sh reads the sections through core-metrics.sh" grep -q 'core-metrics.sh" --sections' "$root/deploy/gpu-source.sh"
check "gpu-corpus.sh reads the full plan's metrics through core-metrics.sh" grep -q 'core-metrics.sh" --full' "$root/deploy/gpu-corpus.sh"
exit "$fail"
