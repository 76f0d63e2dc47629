#!/usr/bin/env bash
# bench/analyze.sh - benchmark `profeed analyze` against a pandas reference
# (bench/reference/ncu_pandas.py) and the `wc -l` floor. See docs/benchmarks.md.
#
# Cases:
#   (a) tests/fixtures/ncu/h200/full_raw.csv + full_details.csv (9 real launches)
#   (b) the same two pages grown to N launches (default 5000) by bench/gen_launches.py
#       (real rows, new sequential IDs; raw + details, or raw only with --large raw)
#
# Per tool and case: median wall time of one job including process start
# (hyperfine -N, no shell), median peak RSS (GNU time %M), and steady-state
# throughput = (bytes_b - bytes_a) / (t_b - t_a), which cancels process start
# and fixed costs. Nothing is built here.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
PY=/usr/bin/python3
PROFEED=${PROFEED:-$ROOT/build/client/profeed}
FIX=$ROOT/tests/fixtures/ncu/h200
RUNS=20          # timed runs, case (a)
RUNS_LARGE=5     # timed runs, case (b)
RSS_RUNS=3       # runs under /usr/bin/time -f %M (median)
WARMUP=1
LAUNCHES=5000
LARGE=raw+details
PIN=0            # CPU to pin the whole benchmark to ("" = no pinning)
REF_ONLY=0
KEEP=0
USE_HF=1

usage() {
  cat <<EOF
usage: bench/analyze.sh [options]
  --runs N          timed runs per command for case (a) (default $RUNS)
  --runs-large N    timed runs per command for case (b) (default $RUNS_LARGE)
  --rss-runs N      runs under /usr/bin/time for peak RSS (default $RSS_RUNS)
  --quick           --runs 5 --runs-large 1 --rss-runs 1
  --launches N      launches in the generated case (b) files (default $LAUNCHES)
  --large raw|raw+details  pages used for case (b) (default $LARGE)
  --cpu N           pin the benchmark to CPU N (default $PIN); --no-pin to not pin
  --reference-only  measure only the pandas reference and wc -l (profeed pending)
  --keep            keep the generated files (path is printed)
  --no-hyperfine    time with a bash loop (\$EPOCHREALTIME) instead of hyperfine
env: PROFEED=path to the profeed binary (default build/client/profeed)
EOF
}

while [ $# -gt 0 ]; do
  case "$1" in
    --runs) RUNS=$2; shift 2 ;;
    --runs-large) RUNS_LARGE=$2; shift 2 ;;
    --rss-runs) RSS_RUNS=$2; shift 2 ;;
    --quick) RUNS=5; RUNS_LARGE=1; RSS_RUNS=1; shift ;;
    --launches) LAUNCHES=$2; shift 2 ;;
    --large) LARGE=$2; shift 2 ;;
    --cpu) PIN=$2; shift 2 ;;
    --no-pin) PIN=""; shift ;;
    --reference-only) REF_ONLY=1; shift ;;
    --keep) KEEP=1; shift ;;
    --no-hyperfine) USE_HF=0; shift ;;
    -h|--help) usage; exit 0 ;;
    *) echo "analyze.sh: unknown option: $1" >&2; usage >&2; exit 2 ;;
  esac
done
case "$LARGE" in raw|raw+details) ;; *) echo "analyze.sh: --large raw|raw+details" >&2; exit 2 ;; esac
for n in "$RUNS" "$RUNS_LARGE" "$RSS_RUNS" "$LAUNCHES"; do
  [[ "$n" =~ ^[1-9][0-9]*$ ]] || { echo "analyze.sh: counts must be positive integers" >&2; exit 2; }
done

# --- prerequisites -----------------------------------------------------------
if [ "$REF_ONLY" = 0 ] && [ ! -x "$PROFEED" ]; then
  cat >&2 <<EOF
analyze.sh: profeed binary not found at $PROFEED
Build a Release binary first:
  cmake -S $ROOT -B $ROOT/build -DCMAKE_BUILD_TYPE=Release && cmake --build $ROOT/build -j\$(nproc)
or set PROFEED=/path/to/profeed, or run with --reference-only.
EOF
  exit 1
fi
[ -x /usr/bin/time ] || { echo "analyze.sh: GNU time missing: apt-get install -y time" >&2; exit 1; }
"$PY" -c 'import pandas' 2>/dev/null || { echo "analyze.sh: $PY has no pandas: apt-get install -y python3-pandas" >&2; exit 1; }
HAVE_HF=0
if [ "$USE_HF" = 1 ] && command -v hyperfine >/dev/null && hyperfine -N --version >/dev/null 2>&1; then HAVE_HF=1; fi

NPROC=$(nproc)   # before pinning (nproc honours the affinity mask)
if [ -n "$PIN" ]; then
  if command -v taskset >/dev/null; then
    taskset -cp "$PIN" $$ >/dev/null   # children (hyperfine, tools) inherit it
  else
    echo "analyze.sh: taskset not found; not pinning" >&2; PIN=""
  fi
fi

WORK=$(mktemp -d "${TMPDIR:-/tmp}/profeed-bench.XXXXXX")
if [ "$KEEP" = 0 ]; then trap 'rm -rf "$WORK"' EXIT; fi

# --- inputs ------------------------------------------------------------------
A_FILES=("$FIX/full_raw.csv" "$FIX/full_details.csv")
"$PY" "$ROOT/bench/gen_launches.py" --launches "$LAUNCHES" "$FIX/full_raw.csv" "$WORK/raw_$LAUNCHES.csv" 2>/dev/null
B_FILES=("$WORK/raw_$LAUNCHES.csv")
A_CMP=("$FIX/full_raw.csv")
if [ "$LARGE" = raw+details ]; then
  "$PY" "$ROOT/bench/gen_launches.py" --details --launches "$LAUNCHES" "$FIX/full_details.csv" "$WORK/details_$LAUNCHES.csv" 2>/dev/null
  B_FILES+=("$WORK/details_$LAUNCHES.csv")
else
  A_FILES=("$FIX/full_raw.csv")   # keep both cases on the same pages
fi
bytes_of() { local t=0 f; for f in "$@"; do t=$((t + $(stat -c %s "$f"))); done; echo "$t"; }
A_BYTES=$(bytes_of "${A_FILES[@]}")
B_BYTES=$(bytes_of "${B_FILES[@]}")

# --- measurement helpers -----------------------------------------------------
quote() { local out="" a; for a in "$@"; do out+="$(printf '%q' "$a") "; done; echo "${out% }"; }

# median wall seconds of running "$@" (stdout to /dev/null): measure RUNS CMD...
measure() {
  local runs=$1; shift
  local cmd; cmd=$(quote "$@")
  if [ "$HAVE_HF" = 1 ]; then
    local json="$WORK/hf.json"
    if ! hyperfine -N --style none --warmup "$WARMUP" --runs "$runs" \
         --export-json "$json" -- "$cmd" >"$WORK/hf.log" 2>&1; then
      echo "analyze.sh: failed: $cmd" >&2; cat "$WORK/hf.log" >&2; exit 1
    fi
    "$PY" -c 'import json,sys; print("%.6f" % json.load(open(sys.argv[1]))["results"][0]["median"])' "$json"
  else
    local i t0 t1 ts=()
    for ((i = 0; i < WARMUP; i++)); do "$@" >/dev/null 2>&1; done
    for ((i = 0; i < runs; i++)); do
      t0=$EPOCHREALTIME; "$@" >/dev/null 2>&1; t1=$EPOCHREALTIME
      ts+=("$(awk -v a="$t0" -v b="$t1" 'BEGIN{printf "%.6f", b-a}')")
    done
    printf '%s\n' "${ts[@]}" | "$PY" -c 'import sys,statistics; print("%.6f" % statistics.median(float(x) for x in sys.stdin))'
  fi
}

# median peak RSS in KB: rss CMD...
rss() {
  local i ks=()
  for ((i = 0; i < RSS_RUNS; i++)); do
    /usr/bin/time -f '%M' -o "$WORK/rss" "$@" >/dev/null 2>"$WORK/rss.err" \
      || { echo "analyze.sh: failed: $*" >&2; cat "$WORK/rss.err" >&2; exit 1; }
    ks+=("$(tail -n 1 "$WORK/rss")")
  done
  printf '%s\n' "${ks[@]}" | "$PY" -c 'import sys,statistics; print(int(statistics.median(int(x) for x in sys.stdin)))'
}

PF_CMD=("$PROFEED" analyze --format json)
REF_CMD=("$PY" "$ROOT/bench/reference/ncu_pandas.py")
WC_CMD=(wc -l)

# --- header ------------------------------------------------------------------
echo "# profeed analyze benchmark"
echo "date:      $(date -u '+%Y-%m-%d %H:%M:%S UTC')"
echo "machine:   $NPROC cores ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')), $(awk '/MemTotal/{printf "%.0f GB", $2/1048576}' /proc/meminfo), $(uname -sr)"
if [ -n "$PIN" ]; then echo "pinned:    CPU $PIN (taskset on the harness; every measured process runs on that one core)"
else echo "pinned:    no"; fi
echo "tools:     $("$PY" -c 'import sys,pandas; print("python", sys.version.split()[0], "pandas", pandas.__version__)'), $( [ "$HAVE_HF" = 1 ] && hyperfine --version || echo 'bash loop (no hyperfine)'), $(wc --version | head -n 1)"
if [ "$REF_ONLY" = 0 ]; then
  bt=$(sed -n 's/^CMAKE_BUILD_TYPE:[A-Z]*=//p' "$(dirname "$PROFEED")/../CMakeCache.txt" 2>/dev/null || true)
  echo "profeed:   $PROFEED${bt:+ (CMAKE_BUILD_TYPE=$bt)}"
fi
echo "runs:      (a) $RUNS, (b) $RUNS_LARGE timed runs after $WARMUP warm-up (medians); peak RSS median of $RSS_RUNS"
echo "case (a):  ${A_FILES[*]##*/}, $A_BYTES bytes"
echo "case (b):  ${B_FILES[*]##*/} ($LAUNCHES launches), $B_BYTES bytes"
echo

# sanity: every tool runs and exits 0 on both cases before timing
for files in A B; do
  declare -n F="${files}_FILES"
  if [ "$REF_ONLY" = 0 ]; then
    out=$("${PF_CMD[@]}" "${F[@]}") || { echo "analyze.sh: profeed failed on ${F[*]}" >&2; exit 1; }
    [ -n "$out" ] || { echo "analyze.sh: profeed printed nothing on ${F[*]}" >&2; exit 1; }
  fi
  "${REF_CMD[@]}" --quiet "${F[@]}" | sed 's/^/reference: /'
  unset -n F
done
echo

declare -A T M
for c in a b; do
  if [ $c = a ]; then files=("${A_FILES[@]}"); runs=$RUNS; else files=("${B_FILES[@]}"); runs=$RUNS_LARGE; fi
  echo "measuring case ($c) ..." >&2
  T[wc,$c]=$(measure "$runs" "${WC_CMD[@]}" "${files[@]}")
  M[wc,$c]=$(rss "${WC_CMD[@]}" "${files[@]}")
  if [ "$REF_ONLY" = 0 ]; then
    T[pf,$c]=$(measure "$runs" "${PF_CMD[@]}" "${files[@]}")
    M[pf,$c]=$(rss "${PF_CMD[@]}" "${files[@]}")
  fi
  T[ref,$c]=$(measure "$runs" "${REF_CMD[@]}" "${files[@]}")
  M[ref,$c]=$(rss "${REF_CMD[@]}" "${files[@]}")
done

# --- report ------------------------------------------------------------------
args=(A_BYTES="$A_BYTES" B_BYTES="$B_BYTES" REF_ONLY="$REF_ONLY")
for k in "${!T[@]}"; do args+=("T_${k/,/_}=${T[$k]}"); done
for k in "${!M[@]}"; do args+=("M_${k/,/_}=${M[$k]}"); done
env "${args[@]}" "$PY" - <<'EOF'
import os
e = os.environ
ref_only = e["REF_ONLY"] == "1"
ab, bb = int(e["A_BYTES"]), int(e["B_BYTES"])
tools = [("profeed", "pf"), ("reference (pandas)", "ref"), ("wc -l (floor)", "wc")]
if ref_only:
    tools = tools[1:]
def t(k, c): return float(e[f"T_{k}_{c}"])
def m(k, c): return int(e[f"M_{k}_{c}"])
def steady(k):
    dt = t(k, "b") - t(k, "a")
    return (bb - ab) / dt / 1e6 if dt > 0 else float("inf")
def ms(s): return f"{s * 1e3:.2f} ms" if s < 1 else f"{s:.2f} s"
def mb(kb): return f"{kb / 1024:.1f} MiB"
print("| tool | (a) wall/job | (a) peak RSS | (b) wall/job | (b) peak RSS | steady state |")
print("|---|---:|---:|---:|---:|---:|")
if ref_only:
    print("| profeed | pending | pending | pending | pending | pending |")
for name, k in tools:
    print(f"| {name} | {ms(t(k,'a'))} | {mb(m(k,'a'))} | {ms(t(k,'b'))} | {mb(m(k,'b'))} | {steady(k):.0f} MB/s |")
print()
print(f"reference per-job MB/s (bytes / median wall): (a) {ab/t('ref','a')/1e6:.2f}, (b) {bb/t('ref','b')/1e6:.1f}")
print(f"wc -l per-job MB/s: (a) {ab/t('wc','a')/1e6:.1f}, (b) {bb/t('wc','b')/1e6:.0f}")
if ref_only:
    print("\nprofeed: pending (--reference-only); ratios not computed")
    raise SystemExit(0)
def mark(ok): return "PASS" if ok else "FAIL"
def marks(vals, ok): return ", ".join(f"({c}) {mark(ok(v))}" for c, v in zip("ab", vals))
print()
print("| ratio | (a) | (b) | target |")
print("|---|---:|---:|---|")
sp = [t("ref", c) / t("pf", c) for c in "ab"]
fl = [t("pf", c) / t("wc", c) for c in "ab"]
mr = [m("pf", c) / m("ref", c) for c in "ab"]
ss = steady("pf") / steady("ref")
print(f"| per-job speed-up, reference / profeed | {sp[0]:.0f}x | {sp[1]:.0f}x | >= 100x: {marks(sp, lambda v: v >= 100)} |")
print(f"| per-job vs floor, profeed / wc -l | {fl[0]:.2f}x | {fl[1]:.2f}x | <= 3x: {marks(fl, lambda v: v <= 3)} |")
print(f"| peak RSS, profeed / reference | {mr[0]:.3f} | {mr[1]:.3f} | <= 0.2: {marks(mr, lambda v: v <= 0.2)} |")
print(f"| steady-state speed-up, profeed / reference | {ss:.0f}x | | >= 10x: {mark(ss >= 10)} |")
print(f"| steady-state profeed throughput (one core) | {steady('pf'):.0f} MB/s | | >= 200 MB/s: {mark(steady('pf') >= 200)} |")
EOF
if [ "$KEEP" = 1 ]; then echo; echo "generated files kept in $WORK"; fi
