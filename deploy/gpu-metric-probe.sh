#!/usr/bin/env bash
# deploy/gpu-metric-probe.sh -k KERNEL_REGEX -m METRIC[,METRIC...] [--section S]... -- PROGRAM [ARGS...]
# Asks Nsight Compute for the named metrics on the first launch whose name matches
# KERNEL_REGEX and says, for each name, whether a column came back and its value. ncu drops
# names it cannot collect with --metrics without a word (profeed's pass plans depend on
# what it keeps), so a metric is worth putting in a plan only once this shows it. Also
# prints ncu --query-metrics lines that mention any of the names' first word. GPU clocks are
# never touched (--clock-control none).
set -uo pipefail
regex='' metrics='' sections=()
while [ $# -gt 0 ]; do
  case "$1" in
    -k) regex=$2; shift 2 ;;
    -m) metrics=$2; shift 2 ;;
    --section) sections+=(--section "$2"); shift 2 ;;
    --) shift; break ;;
    -h|--help) sed -n '2,8p' "$0"; exit 0 ;;
    *) echo "gpu-metric-probe: unknown argument $1 (--help)" >&2; exit 2 ;;
  esac
done
[ -n "$regex" ] && [ -n "$metrics" ] && [ $# -gt 0 ] || { echo "gpu-metric-probe: need -k, -m and a program (--help)" >&2; exit 2; }
command -v ncu >/dev/null || { echo "gpu-metric-probe: ncu is not on PATH" >&2; exit 2; }
out=$(mktemp /tmp/probe.XXXXXX.csv)
trap 'rm -f "$out"' EXIT
LC_ALL=C ncu --clock-control none -k "regex:$regex" -c 1 --csv --page raw --metrics "$metrics" "${sections[@]}" \
  --log-file "$out" "$@" > /dev/null 2>&1
echo "ncu rc=$?"
python3 - "$out" "$metrics" <<'PY'
import csv, sys
rows = [r for r in csv.reader(open(sys.argv[1])) if r]
rows = [r for r in rows if not r[0].startswith("==")]
if len(rows) < 3:
    print("no kernel row came back"); sys.exit(0)
head, units, vals = rows[0], rows[1], rows[2]
col = {n: i for i, n in enumerate(head)}
for m in sys.argv[2].split(","):
    hit = [n for n in head if n == m or n.startswith(m + ".")]
    print(f"{m}: " + (", ".join(f"{n}={vals[col[n]]} {units[col[n]]}" for n in hit) if hit else "DROPPED"))
extra = [n for n in head if n.startswith(("sass__", "derived__"))]
if extra:
    print("sass__/derived__ columns:", ", ".join(f"{n}={vals[col[n]]}" for n in extra))
PY
for w in $(echo "$metrics" | tr ',' '\n' | cut -d_ -f1-3 | sort -u); do
  ncu --query-metrics 2>/dev/null | grep -i -- "$w" | head -5
done
