#!/usr/bin/env bash
# deploy/gpu-corpus.sh [--out DIR] [--plans "core_mwa sol pass full"] [--launch-count N] CORPUS...:
# captures the ground-truth corpora on a GPU host with Nsight Compute, plan by plan, and times each
# run. --launch-count N profiles only the first N launches each plan reaches (ncu -c N): for a
# program of thousands of alike launches, such as an RNN's per-step kernels (corpus v54's LSTM).
#
# CORPUS is one of
#   h200       tests/fixtures/ncu/h200/kernels.cu, run as `kernels all`
#   h200-v2    tests/fixtures/ncu/h200-v2/corpus_v2.cu, run as `corpus all`
#   h200-v3    tests/fixtures/ncu/h200-v3/corpus_v3.cu, run as `corpus_v3 all`
#   h200-v4    tests/fixtures/ncu/h200-v4/corpus_v4.cu, run as `corpus_v4 all`
#   h200-v5    tests/fixtures/ncu/h200-v5/corpus_v5.cu, run as `corpus_v5 all`; its lever
#              timings (`corpus_v5 time`, uninstrumented) go to CORPUS/levers.txt
#   h200-v6    tests/fixtures/ncu/h200-v6/corpus_v6.cu, the same way (`corpus_v6 all|time`)
#   h200-v7    tests/fixtures/ncu/h200-v7/corpus_v7.cu, the same way (`corpus_v7 all|time`)
#   h200-v8    tests/fixtures/ncu/h200-v8/corpus_v8.cu, the same way (`corpus_v8 all|time`)
#   h200-v9    tests/fixtures/ncu/h200-v9/corpus_v9.cu, the same way (`corpus_v9 all|time`),
#              with the SASS of its kernels in CORPUS/sass.txt.xz
#   h200-v10, h200-v11  tests/fixtures/ncu/h200-vN/corpus_vN.cu, the same way as v9
#   h200-vN    where the corpus is tests/fixtures/ncu/h200-vN/corpus_vN.py (Triton kernels, v24):
#              `python3 corpus_vN.py all|time`, the same modes
#   workloads  tests/fixtures/ncu/h200-v3/workloads.py all (PyTorch, cuBLAS, cuDNN, Triton,
#              KernelBench problems); only the launches inside NVTX ranges named "profile"
#              are profiled (--nvtx --nvtx-include profile/), so warm-up runs stay out.
#   workloads-vN   tests/fixtures/ncu/h200-vN/workloads.py all, the same way (v12)
#   workloads-vN@NAME  that file's one workload NAME (a problem too long to capture with the rest),
#              into CORPUS workloads-vN-NAME
# Plans:
#   core_mwa  the collector's default plan since 2026-12-02: --csv --page raw --metrics <its
#          metric list> --section MemoryWorkloadAnalysis (the spill counters), both read from
#          analyzer/ncu/ncu_plan.c through deploy/core-metrics.sh, LC_ALL=C
#   core   the metric list alone (the default plan until 2026-12-01)
#   sol    --csv --page raw --section SpeedOfLight
#   pass   three runs: --section SpeedOfLight; --section MemoryWorkloadAnalysis;
#          --section WarpStateStats --section Occupancy --section LaunchStats
#   detailed  KernelFoundry's capture: --set detailed --csv (the details page), CORPUS/detailed.csv
#   ka     KernelAgent's capture: --csv --page raw --metrics <its 29 names, two of which GH100
#          lacks> (--replay-mode kernel, as it runs ncu), CORPUS/ka_raw.csv
#   full   --set full --metrics <what the full plan adds: deploy/core-metrics.sh --full>
#          --import-source yes -o full, then --import ... --csv --page raw / details
# Each capture is written as CORPUS/<plan>_raw.csv (pass1_sol.csv, pass2_memory.csv,
# pass3_warps.csv, full_raw.csv, full_details.csv; from corpus v30 on, the levers' own --set full
# capture, levers_full_raw.csv.xz: what no test reads is kept compressed, so the repository
# stays under the device's 64 MiB working tree); CORPUS/times.txt has the wall time of the
# uninstrumented run and of every plan, and the replay passes ncu reported per kernel. Everything
# is packed into OUT/CORPUS.tar.xz; a run stopped by a signal (a time limit, Ctrl-C) packs what
# the corpus under way measured as OUT/CORPUS.partial.tar.xz, with its --set full report when it
# was written but not yet imported. GPU clocks and settings are never touched
# (--clock-control none). Needs nvcc and ncu on PATH (python3 with torch + triton for workloads).
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=${OUT:-$PWD/gpu-corpus-out}
plans="core_mwa sol pass full"
launch_count=""
corpora=()
while [ $# -gt 0 ]; do
  case "$1" in
    --out) out=$2; shift ;;
    --plans) plans=$2; shift ;;
    --launch-count)
      case "$2" in ''|*[!0-9]*|0) echo "gpu-corpus: --launch-count takes a positive number, not '$2'" >&2; exit 2 ;; esac
      launch_count=$2; shift ;;
    -h|--help) sed -n "2,49p" "$0"; exit 0 ;;
    -*) echo "gpu-corpus: unknown option $1" >&2; exit 2 ;;
    *) corpora+=("$1") ;;
  esac
  shift
done
[ ${#corpora[@]} -gt 0 ] || { echo "gpu-corpus: name at least one corpus (--help)" >&2; exit 2; }
command -v ncu >/dev/null || { echo "gpu-corpus: ncu is not on PATH" >&2; exit 2; }
mkdir -p "$out"
work=$(mktemp -d /tmp/gpu-corpus.XXXXXX)
trap 'rm -rf "$work"' EXIT
# A capture stopped by a signal (a device call's time limit runs out, Ctrl-C) keeps what it
# measured: the corpus under way is packed as OUT/CORPUS.partial.tar.xz, its --set full report
# with it when that was written but not yet imported, before the work directory goes.
current=""
stopped() {
  if [ -n "$current" ] && [ -d "$work/$current" ]; then
    if [ -f "$work/$current-full.ncu-rep" ]; then cp "$work/$current-full.ncu-rep" "$work/$current/"; fi
    tar -C "$work" -cJf "$out/$current.partial.tar.xz" "$current" \
      && echo "gpu-corpus: stopped; what $current captured is in $out/$current.partial.tar.xz" >&2
  fi
  exit 143
}
trap stopped TERM INT

# The default plan's metrics, exactly as the collector lists them.
core_metrics=$(bash "$root/deploy/core-metrics.sh") || exit 2
core_section_args=$(bash "$root/deploy/core-metrics.sh" --sections) || exit 2
read -r -a core_sections <<< "$core_section_args"
full_metrics=$(bash "$root/deploy/core-metrics.sh" --full) || exit 2
# KernelAgent's metric list (meta-pytorch/KernelAgent, ncu_profiler.py at PR #86; its two
# pre-Hopper names, the FP32 pipe and the memory-dependency stall, ncu drops without a word).
ka_metrics=sm__cycles_active.avg,sm__warps_active.avg.pct_of_peak_sustained_active,launch__occupancy_limit_blocks,launch__occupancy_limit_registers,launch__occupancy_limit_shared_mem,launch__registers_per_thread,sm__inst_executed.sum,sm__inst_executed_pipe_fp32.avg.pct_of_peak_sustained_active,sm__inst_executed_pipe_tensor.avg.pct_of_peak_sustained_active,dram__bytes_read.sum,dram__bytes_write.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,dram__bytes.sum.per_second,gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed,launch__shared_mem_per_block_allocated,l1tex__t_sector_hit_rate.pct,l1tex__throughput.avg.pct_of_peak_sustained_active,lts__t_sector_hit_rate.pct,lts__throughput.avg.pct_of_peak_sustained_active,sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_elapsed,smsp__sass_average_data_bytes_per_sector_mem_global_op_ld.pct,smsp__warp_issue_stalled_memory_dependency_per_warp_active.pct,smsp__warp_issue_stalled_short_scoreboard_per_warp_active.pct,smsp__warp_issue_stalled_long_scoreboard_per_warp_active.pct,smsp__warp_issue_stalled_barrier_per_warp_active.pct,smsp__warp_issue_stalled_branch_resolving_per_warp_active.pct,smsp__sass_average_branch_targets_threads_uniform.pct,sm__throughput.avg.pct_of_peak_sustained_elapsed,gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed

now() { date +%s.%N; }
# timed LABEL DIR CMD...: runs CMD, appends "LABEL rc=N S s" to DIR/times.txt.
timed() {
  local label=$1 dir=$2
  shift 2
  local t0 t1 rc
  t0=$(now)
  "$@" > "$dir/$label.log" 2>&1
  rc=$?
  t1=$(now)
  printf '%s rc=%d %.2f s\n' "$label" "$rc" "$(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }')" | tee -a "$dir/times.txt"
  return $rc
}

# capture CORPUS DIR PROGRAM...: every plan of $plans over one program.
capture() {
  local name=$1 dir=$2
  shift 2
  local ncu=(ncu --clock-control none --target-processes all)
  if [ -n "$launch_count" ]; then ncu+=(-c "$launch_count"); fi
  case "$name" in workloads*) ncu+=(--nvtx --nvtx-include "profile/") ;; esac
  # corpus_v3's input generators (init_fill_*) run several times: only its kernels.
  # From v3 on, each corpus's kernels are named vN_* (its levers fixN_*, its inputs init_*).
  case "$name" in h200-v[3-9]|h200-v[1-9][0-9]) ncu+=(-k "regex:^${name#h200-}_") ;; esac
  if [ "${name#workloads}" != "$name" ]; then
    timed uninstrumented "$dir" "$@" --list-kernels
  else
    timed uninstrumented "$dir" "$@"
  fi
  for plan in $plans; do
    case "$plan" in
      core) LC_ALL=C timed core "$dir" "${ncu[@]}" --csv --page raw --metrics "$core_metrics" \
              --log-file "$dir/core_raw.csv" "$@" ;;
      core_mwa) LC_ALL=C timed core_mwa "$dir" "${ncu[@]}" --csv --page raw --metrics "$core_metrics" \
              "${core_sections[@]}" --log-file "$dir/core_mwa_raw.csv" "$@" ;;
      detailed) LC_ALL=C timed detailed "$dir" "${ncu[@]}" --set detailed --csv \
              --log-file "$dir/detailed.csv" "$@" ;;
      ka) LC_ALL=C timed ka "$dir" "${ncu[@]}" --replay-mode kernel --csv --page raw --metrics "$ka_metrics" \
              --log-file "$dir/ka_raw.csv" "$@" ;;
      sol) timed sol "$dir" "${ncu[@]}" --csv --page raw --section SpeedOfLight \
              --log-file "$dir/sol_raw.csv" "$@" ;;
      pass)
        timed pass1 "$dir" "${ncu[@]}" --csv --page raw --section SpeedOfLight --log-file "$dir/pass1_sol.csv" "$@"
        timed pass2 "$dir" "${ncu[@]}" --csv --page raw --section MemoryWorkloadAnalysis \
          --log-file "$dir/pass2_memory.csv" "$@"
        timed pass3 "$dir" "${ncu[@]}" --csv --page raw --section WarpStateStats --section Occupancy \
          --section LaunchStats --log-file "$dir/pass3_warps.csv" "$@" ;;
      full)
        timed full "$dir" "${ncu[@]}" --set full --metrics "$full_metrics" --import-source yes -f \
          -o "$dir-full" "$@"
        ncu --import "$dir-full.ncu-rep" --csv --page raw > "$dir/full_raw.csv" 2> "$dir/import.log"
        ncu --import "$dir-full.ncu-rep" --csv --page details > "$dir/full_details.csv" 2>> "$dir/import.log" ;;
      *) echo "gpu-corpus: unknown plan $plan" >&2; return 2 ;;
    esac
  done
  # Replay passes per kernel, as ncu counted them ("... - 12 passes").
  for log in "$dir"/*.log "$dir"/*_raw.csv "$dir"/pass*.csv; do
    grep -o 'Profiling "[^"]*".*passes' "$log" 2>/dev/null | sed "s|^|$(basename "$log"): |"
  done > "$dir/passes.txt"
}

{ ncu --version; nvcc --version | tail -2; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem \
    --format=csv; } > "$out/env.txt" 2>&1
for name in "${corpora[@]}"; do
  tag=${name/@/-} # workloads-vN@NAME captures into workloads-vN-NAME
  dir=$work/$tag
  current=$tag
  mkdir -p "$dir"
  echo "== $name ($(date -u +%T))"
  case "$name" in
    h200)
      nvcc -O3 -arch=sm_90 -lineinfo -o "$work/kernels" "$root/tests/fixtures/ncu/h200/kernels.cu" || exit 1
      capture "$name" "$dir" "$work/kernels" all ;;
    h200-v2)
      nvcc -O3 -arch=sm_90 -lineinfo -o "$work/corpus" "$root/tests/fixtures/ncu/h200-v2/corpus_v2.cu" || exit 1
      capture "$name" "$dir" "$work/corpus" all ;;
    h200-v3)
      nvcc -O3 -arch=sm_90 -lineinfo -o "$work/corpus_v3" "$root/tests/fixtures/ncu/h200-v3/corpus_v3.cu" || exit 1
      (cd "$dir" && sh "$root/tests/fixtures/ncu/h200-v3/sass_check.sh" "$work/corpus_v3") > "$dir/sass_check.txt" 2>&1
      capture "$name" "$dir" "$work/corpus_v3" all ;;
    h200-v4)
      nvcc -O3 -arch=sm_90 -lineinfo -o "$work/corpus_v4" "$root/tests/fixtures/ncu/h200-v4/corpus_v4.cu" || exit 1
      capture "$name" "$dir" "$work/corpus_v4" all ;;
    h200-v[5-9]|h200-v[1-9][0-9])
      v=${name#h200-}
      src=$root/tests/fixtures/ncu/$name/corpus_$v.cu
      if [ ! -f "$src" ] && [ -f "${src%.cu}.py" ]; then
        # A corpus of Triton kernels: the same modes, run by python3 (each kernel is
        # compiled on its first launch, outside no range: -k keeps only the vN_* kernels).
        for i in 1 2 3; do echo "# run $i"; python3 "${src%.cu}.py" time; done > "$dir/levers.txt" 2>&1
        capture "$name" "$dir" python3 "${src%.cu}.py" all
        tar -C "$work" -cJf "$out/$tag.tar.xz" "$tag"
        cat "$dir/times.txt"
        continue
      fi
      [ -f "$src" ] || { echo "gpu-corpus: unknown corpus $name (no $src)" >&2; exit 2; }
      nvcc -O3 -arch=sm_90 -lineinfo -Xptxas -v -o "$work/corpus_$v" "$src" \
        > "$dir/ptxas.txt" 2>&1 || { cat "$dir/ptxas.txt"; exit 1; }
      # The SASS of the corpus's kernels and levers: what the predictions assumed the
      # compiler emitted (predication, atomics, division) is checked against it.
      case "$v" in v[5-8]) ;; *) cuobjdump -sass "$work/corpus_$v" \
        | awk -v k="${v}_" -v f="fix${v#v}_" '/Function :/ { keep = index($3, k) || index($3, f) } keep' \
        > "$dir/sass.txt" 2>&1 ;; esac
      for i in 1 2 3; do echo "# run $i"; "$work/corpus_$v" time; done > "$dir/levers.txt" 2>&1
      capture "$name" "$dir" "$work/corpus_$v" all
      # The levers' own capture (--set full, fixN_* kernels): where a lever ran slower or
      # faster than a model said, what it changed is read from it, not guessed (corpus v30).
      if [ "${v#v}" -ge 30 ] 2>/dev/null; then
        LC_ALL=C timed levers_full "$dir" ncu --clock-control none --set full -k "regex:^fix${v#v}_" \
          --csv --page raw --log-file "$dir/levers_full_raw.csv" "$work/corpus_$v" all
      fi
      for f in "$dir/sass.txt" "$dir/levers_full_raw.csv"; do if [ -f "$f" ]; then xz -9 -f "$f"; fi; done ;;
    workloads)
      capture "$name" "$dir" python3 "$root/tests/fixtures/ncu/h200-v3/workloads.py" all ;;
    workloads-v*) # workloads-vN, or workloads-vN@NAME for its one workload NAME
      corpus=${name%%@*}
      src=$root/tests/fixtures/ncu/h200-${corpus#workloads-}/workloads.py
      [ -f "$src" ] || { echo "gpu-corpus: unknown corpus $name (no $src)" >&2; exit 2; }
      what=all
      if [ "$corpus" != "$name" ]; then what=${name#*@}; fi
      capture "$name" "$dir" python3 "$src" "$what" ;;
    *) echo "gpu-corpus: unknown corpus $name" >&2; exit 2 ;;
  esac
  tar -C "$work" -cJf "$out/$tag.tar.xz" "$tag"
  cat "$dir/times.txt"
done
echo "gpu-corpus: done; archives in $out"
