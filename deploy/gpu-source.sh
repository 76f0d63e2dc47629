#!/usr/bin/env bash
# deploy/gpu-source.sh [--out DIR] [--build DIR] [TARGET...]: on a GPU host with Nsight
# Compute, captures source pages (per-instruction samples and counters with CUDA lines)
# the way the collector's source pass does (JobRequest.source, `profeed submit --source`),
# and measures what that pass costs.
#
# TARGET is one of
#   v2:KERNEL            one kernel of tests/fixtures/ncu/h200-v2/corpus_v2.cu, built with
#                        nvcc -O3 -arch=sm_90 -lineinfo and run as `corpus KERNEL`
#   v2:all               every corpus v2 kernel in one run: one page for all of them, as the
#                        collector exports it (checks that ncu prints a block per kernel)
#   v2-nolineinfo:KERNEL the same kernel built WITHOUT -lineinfo: the page profeed must
#                        read as "the build lacks line info" (SASS only)
#   workload:NAME        a workload of tests/fixtures/ncu/h200-v3/workloads.py (e.g. the
#                        Triton ones: triton_softmax_fp32, triton_matmul_fp16); only the
#                        launches inside its NVTX range "profile" are profiled
# Default: v2:aos_float3_x v2:smem_stride4 v2:divergent_quarter v2:local_array_dyn v2:all
#          v2-nolineinfo:aos_float3_x workload:triton_softmax_fp32 workload:triton_matmul_fp16
#
# Per target, each run timed (wall clock, into times.txt):
#   uninstrumented   the program alone
#   core             the collector's default pass (its metric list and section, read from
#                    analyzer/ncu/ncu_plan.c through deploy/core-metrics.sh)
#   source_noimport  the source pass's capture without --import-source
#   source           the source pass's capture as the collector runs it:
#                    --section SourceCounters --section WarpStateStats --import-source yes -o R
#   export           ncu --import R.ncu-rep --csv --page source --print-source cuda,sass
#                    (every kernel: what the collector sends as source.csv)
#   export_k         the same with -k KERNEL, one page per kernel (v2 targets)
# and, when profeed is built (--build, default build/), `profeed analyze core_raw.csv
# source.csv` into feedback.txt: the lines the findings name. Everything goes to
# OUT/source-<date>.tar.xz (default OUT: ./gpu-source-out). GPU clocks and settings are never
# touched (--clock-control none). Needs nvcc and ncu on PATH; python3 with torch and triton
# for workload targets.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=${OUT:-$PWD/gpu-source-out}
build=$root/build
targets=()
while [ $# -gt 0 ]; do
  case "$1" in
    --out) out=$2; shift ;;
    --build) build=$2; shift ;;
    -h|--help) sed -n '2,36p' "$0"; exit 0 ;;
    -*) echo "gpu-source: unknown option $1" >&2; exit 2 ;;
    *) targets+=("$1") ;;
  esac
  shift
done
[ ${#targets[@]} -gt 0 ] || targets=(v2:aos_float3_x v2:smem_stride4 v2:divergent_quarter v2:local_array_dyn
  v2:all v2-nolineinfo:aos_float3_x workload:triton_softmax_fp32 workload:triton_matmul_fp16)
command -v ncu >/dev/null || { echo "gpu-source: ncu is not on PATH" >&2; exit 2; }
profeed=$build/client/profeed
[ -x "$profeed" ] || { echo "gpu-source: $profeed is not built: captures only, no feedback.txt" >&2; profeed=; }
stamp=$(date -u +%Y-%m-%d)
work=$(mktemp -d /tmp/gpu-source.XXXXXX)
trap 'rm -rf "$work"' EXIT
top=$work/source-$stamp
mkdir -p "$top" "$out"

core_metrics=$(bash "$root/deploy/core-metrics.sh") || exit 2
core_section_args=$(bash "$root/deploy/core-metrics.sh" --sections) || exit 2
read -r -a core_sections <<< "$core_section_args"
# The source pass's sections, as s_ncu_source_pass() in analyzer/ncu/ncu_plan.c builds them.
grep -q '"SourceCounters"' "$root/analyzer/ncu/ncu_plan.c" && grep -q '"WarpStateStats"' "$root/analyzer/ncu/ncu_plan.c" ||
  echo "gpu-source: WARNING: analyzer/ncu/ncu_plan.c's source pass no longer names SourceCounters + WarpStateStats" >&2
source_sections=(--section SourceCounters --section WarpStateStats)

now() { date +%s.%N; }
# timed LABEL DIR CMD...: runs CMD (stdout and stderr to DIR/LABEL.log), appends
# "LABEL rc=N S s" to DIR/times.txt.
timed() {
  local label=$1 dir=$2
  shift 2
  local t0 t1 rc
  t0=$(now)
  "$@" > "$dir/$label.log" 2>&1
  rc=$?
  t1=$(now)
  printf '%s rc=%d %.2f s\n' "$label" "$rc" "$(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }')" |
    tee -a "$dir/times.txt"
  return $rc
}
# export_page DIR OUTFILE [NCU ARGS...]: the source page of DIR's report, timed as LABEL.
export_page() {
  local dir=$1 file=$2 label=$3
  shift 3
  local t0 t1 rc
  t0=$(now)
  ncu --import "$dir/report.ncu-rep" --csv --page source --print-source cuda,sass "$@" > "$dir/$file" 2> "$dir/$label.log"
  rc=$?
  t1=$(now)
  printf '%s rc=%d %.2f s\n' "$label" "$rc" "$(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }')" |
    tee -a "$dir/times.txt"
}

# run TARGET_DIR KERNEL_FILTER PROGRAM...: the four captures, the exports, the feedback.
run() {
  local dir=$1 kernel=$2
  shift 2
  local ncu=(ncu --clock-control none --target-processes all)
  case "$dir" in */workload_*) ncu+=(--nvtx --nvtx-include "profile/") ;; esac
  [ -n "$kernel" ] && ncu+=(-k "$kernel")
  timed uninstrumented "$dir" "$@"
  LC_ALL=C timed core "$dir" "${ncu[@]}" --csv --page raw --metrics "$core_metrics" "${core_sections[@]}" --log-file "$dir/core_raw.csv" "$@"
  timed source_noimport "$dir" "${ncu[@]}" "${source_sections[@]}" -f -o "$dir/noimport" "$@"
  timed source "$dir" "${ncu[@]}" "${source_sections[@]}" --import-source yes -f -o "$dir/report" "$@"
  export_page "$dir" source.csv export
  [ -n "$kernel" ] && export_page "$dir" source_k.csv export_k -k "$kernel"
  grep -c '^"Function Name"' "$dir/source.csv" | sed 's/^/functions in source.csv: /' | tee -a "$dir/times.txt"
  ls -l "$dir/report.ncu-rep" "$dir/noimport.ncu-rep" 2>/dev/null |
    awk '{ n = split($NF, p, "/"); print p[n] ": " $5 " bytes" }' >> "$dir/times.txt"
  rm -f "$dir/noimport.ncu-rep"
  if [ -n "$profeed" ]; then
    "$profeed" analyze --min-share 0 "$dir/core_raw.csv" "$dir/source.csv" > "$dir/feedback.txt" 2>&1
    echo "profeed analyze rc=$? ($(grep -c 'Where:' "$dir/feedback.txt") findings with lines)" | tee -a "$dir/times.txt"
  fi
}

{ ncu --version; nvcc --version | tail -2; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem \
    --format=csv; } > "$top/env.txt" 2>&1
built_v2=0 built_v2_plain=0
for target in "${targets[@]}"; do
  kind=${target%%:*} name=${target#*:}
  dir=$top/${kind}_$name
  mkdir -p "$dir"
  echo "== $target ($(date -u +%T))"
  case "$kind" in
    v2|v2-nolineinfo)
      if [ "$kind" = v2 ] && [ $built_v2 = 0 ]; then
        nvcc -O3 -arch=sm_90 -lineinfo -o "$work/corpus" "$root/tests/fixtures/ncu/h200-v2/corpus_v2.cu" || exit 1
        built_v2=1
      fi
      if [ "$kind" = v2-nolineinfo ] && [ $built_v2_plain = 0 ]; then
        nvcc -O3 -arch=sm_90 -o "$work/corpus_plain" "$root/tests/fixtures/ncu/h200-v2/corpus_v2.cu" || exit 1
        built_v2_plain=1
      fi
      program=$work/corpus
      [ "$kind" = v2-nolineinfo ] && program=$work/corpus_plain
      filter=$name
      [ "$name" = all ] && filter=
      run "$dir" "$filter" "$program" "$name" ;;
    workload)
      run "$dir" "" python3 "$root/tests/fixtures/ncu/h200-v3/workloads.py" "$name" ;;
    *) echo "gpu-source: unknown target $target (--help)" >&2; exit 2 ;;
  esac
done
# The reports stay out of the archive (the pages hold what profeed reads); their sizes are
# in times.txt.
find "$top" -name '*.ncu-rep' -delete
tar -C "$work" -cJf "$out/source-$stamp.tar.xz" "source-$stamp"
echo "gpu-source: done; $out/source-$stamp.tar.xz"
for t in "$top"/*/times.txt; do echo "-- $(basename "$(dirname "$t")")"; cat "$t"; done
