#!/usr/bin/env bash
# Runs the libFuzzer targets one after another for a fixed time each, seeded
# with the real fixtures, and prints one summary line per target. Crashing
# inputs land in $OUT_DIR/crashes/<target>/; add each one to the target's seed
# folder once fixed, so its replay test keeps it fixed.
#
#   cmake -S . -B build-fuzz -DCMAKE_C_COMPILER=clang -DPROFEED_FUZZ=ON -DPROFEED_SANITIZE=ON
#   cmake --build build-fuzz --target fuzz_ncu_csv fuzz_ncu_source fuzz_unitrace fuzz_vtune fuzz_wire
#   tests/fuzz/run_fuzzers.sh build-fuzz 600                  # all targets, 10 min each
#   tests/fuzz/run_fuzzers.sh build-fuzz 60 fuzz_wire         # one target
set -euo pipefail

usage() { sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//'; }
[[ ${1:-} == -h || ${1:-} == --help ]] && { usage; exit 0; }
[[ $# -ge 2 ]] || { usage >&2; exit 2; }
build=$1 seconds=$2
shift 2
root=$(cd "$(dirname "$0")/../.." && pwd)
targets=("$@")
[[ ${#targets[@]} -gt 0 ]] || targets=(fuzz_ncu_csv fuzz_ncu_source fuzz_unitrace fuzz_vtune fuzz_wire)
out=${OUT_DIR:-$(mktemp -d /tmp/profeed-fuzz.XXXXXX)}

seeds_of() {
    case $1 in
    fuzz_ncu_csv) echo "$root/tests/fixtures/ncu" ;;
    fuzz_ncu_source) echo "$root/tests/fixtures/ncu/h200-v2 $root/tests/fixtures/ncu/source" ;;
    fuzz_unitrace) echo "$root/tests/fixtures/intel/unitrace_b580 $root/tests/fixtures/intel/unitrace_pvc $root/tests/fixtures/intel/unitrace_ocl_sampling $root/tests/fixtures/intel/unitrace_regress" ;;
    fuzz_vtune) echo "$root/tests/fixtures/intel/vtune" ;;
    fuzz_wire) echo "$root/tests/fixtures/wire" ;;
    *) echo "unknown target $1" >&2; return 1 ;;
    esac
}

echo "fuzzing ${targets[*]} for ${seconds}s each; logs and corpora in $out"
for target in "${targets[@]}"; do
    bin=$build/tests/$target
    [[ -x $bin ]] || { echo "$bin is not built (see --help)" >&2; exit 1; }
    corpus=$out/corpus/$target crashes=$out/crashes/$target
    mkdir -p "$corpus" "$crashes"
    # Seeds are copied flat, named by content as libFuzzer names its own:
    # libFuzzer reads one folder level, and fixture names repeat (README.md).
    for dir in $(seeds_of "$target"); do
        while IFS= read -r -d '' file; do
            cp "$file" "$corpus/$(sha1sum <"$file" | cut -c1-40)"
        done < <(find "$dir" -type f -size -4M -print0)
    done
    echo "$(date -u +%H:%M:%S) $target: $(ls "$corpus" | wc -l) seeds, ${seconds}s"
    rc=0
    "$bin" "$corpus" -max_total_time="$seconds" -max_len=1048576 -timeout=30 -rss_limit_mb=4096 \
        -print_final_stats=1 -artifact_prefix="$crashes/" >"$out/$target.log" 2>&1 || rc=$?
    runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$out/$target.log" | grep -o '[0-9]*$' || echo "?")
    cov=$(grep -o 'cov: [0-9]*' "$out/$target.log" | tail -1 | grep -o '[0-9]*' || echo "?")
    found=$(ls "$crashes" | wc -l)
    echo "$(date -u +%H:%M:%S) $target: rc $rc, $runs runs, coverage $cov edges, corpus $(ls "$corpus" | wc -l), crashing inputs $found"
done
