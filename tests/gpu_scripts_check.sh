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
# gpu-corpus.sh's own behaviour, against a stand-in ncu (no GPU here): a run stopped by a signal
# keeps what its corpus measured, --launch-count reaches ncu as -c, and bad input is refused.
fake=$(mktemp -d)
trap 'rm -rf "$fake"' EXIT
cat > "$fake/ncu" << 'NCU'
#!/bin/sh
case "$1" in --version) echo "stand-in ncu" ;; *) echo "ncu $*" >&2; sleep 60 ;; esac
NCU
chmod +x "$fake/ncu"
PATH="$fake:$PATH" timeout -s TERM 10 bash "$root/deploy/gpu-corpus.sh" --out "$fake/out" --plans core_mwa \
  --launch-count 7 workloads-v54@kb3_21_efficientnet_mbconv > "$fake/log" 2>&1
part="$fake/out/workloads-v54-kb3_21_efficientnet_mbconv.partial.tar.xz"
check "gpu-corpus.sh packs a stopped run's corpus as CORPUS.partial.tar.xz" [ -s "$part" ]
check "gpu-corpus.sh passes --launch-count to ncu as -c" \
  sh -c "tar -xJOf '$part' workloads-v54-kb3_21_efficientnet_mbconv/core_mwa.log | grep -q -- '--target-processes all -c 7 '"
# The agents' own captures: KernelFoundry's --set detailed details page, KernelAgent's metric list.
for plan in detailed ka; do
  PATH="$fake:$PATH" timeout -s TERM 8 bash "$root/deploy/gpu-corpus.sh" --out "$fake/$plan" --plans "$plan" \
    workloads-v54@kb3_21_efficientnet_mbconv > "$fake/$plan.out" 2>&1
done
agents() { tar -xJOf "$fake/$1/workloads-v54-kb3_21_efficientnet_mbconv.partial.tar.xz" "workloads-v54-kb3_21_efficientnet_mbconv/$1.log"; }
check "gpu-corpus.sh's detailed plan runs ncu --set detailed --csv (KernelFoundry's capture)" \
  sh -c "$(declare -f agents); fake='$fake'; agents detailed | grep -q -- '--set detailed --csv --log-file'"
check "gpu-corpus.sh's ka plan runs KernelAgent's 29 metrics on the raw page, kernel replay" \
  sh -c "$(declare -f agents); fake='$fake'; agents ka | grep -q -- '--replay-mode kernel --csv --page raw --metrics sm__cycles_active.avg,' && [ \$(agents ka | tr ' ' '\n' | grep -- 'sm__cycles_active.avg,' | tr ',' '\n' | wc -l) -eq 29 ]"
check "gpu-corpus.sh refuses a launch count that is not a positive number" \
  sh -c "! PATH='$fake:$PATH' bash '$root/deploy/gpu-corpus.sh' --launch-count 0 h200 2> /dev/null"
check "gpu-corpus.sh names an unknown workloads corpus" \
  sh -c "PATH='$fake:$PATH' bash '$root/deploy/gpu-corpus.sh' --out '$fake/o2' workloads-v99@x 2>&1 | grep -q 'unknown corpus workloads-v99@x'"
exit "$fail"
