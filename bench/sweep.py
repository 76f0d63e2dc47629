#!/usr/bin/env python3
"""bench/sweep.py PROFEED [--counters C,C...] [--low X] [--high X] [--steps N] [--jump POINTS]
[--capture SUBSTRING]: whether profeed's verdict moves with one counter the way a model should.

Noise (bench/stability.py) asks whether a verdict survives a second profile; this asks how it
changes along one input. For every default-plan capture of bench/accuracy.py's CAPTURES, each
swept counter (all its rollups and forms; the kernel's time in every form as one, as
stability.py groups them) is scaled by N factors from --low to --high, one copy of every launch
per factor under its own kernel name, and the copies are analyzed in one run. Along a sweep a
kernel's first finding should change a few times at most, each category holding one stretch:

- an oscillation, a category that comes back after another (A > B > A), is listed. Two models'
  gains crossing twice (their slopes differ) is one cause, the 10% a cause needs to displace the
  bound another; a rule that contradicts itself would be a third;
- a step, the lead's estimate moving by --jump points of the time or more between two adjacent
  factors while its category holds, is listed too: a model with a step at a line.

Scaling one counter alone makes captures no GPU would give (DRAM busier with the same bytes), so
a row here is a place to look, not a bug. Launches that profeed analyzes apart (launch_ids) are
skipped. Exit status 0 always: this measures, it does not gate.
"""
import argparse
import csv
import io
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import accuracy  # noqa: E402  (the captures and the way profeed is run)
import stability  # noqa: E402  (the counters' grouping and the cells' scaling)

COUNTERS = ("gpu__dram_throughput", "lts__throughput", "l1tex__throughput", "sm__throughput",
            "smsp__issue_active", "sm__warps_active", "smsp__thread_inst_executed_per_inst_executed",
            "smsp__sass_average_data_bytes_per_sector_mem_global_op_ld", "sm__pipe_fma_cycles_active",
            "sm__pipe_alu_cycles_active", "sm__inst_executed_pipe_lsu", "time")


def read_page(path):
    """(the lines before the launches, the header, the launches as rows) of a raw page."""
    head, header, launches = [], None, []
    with open(path, newline="", errors="replace") as f:
        for line in f.read().split("\n"):
            row = next(csv.reader([line])) if line.startswith('"') else None
            if header is not None and row and row[0].isdigit() and len(row) == len(header):
                launches.append(row)
            else:
                head.append(line)
                if row and row[0] == "ID":
                    header = row
    return head, header, launches


def swept_page(head, header, launches, counter, factors, dst):
    """Writes a page with one copy of every launch per factor, kernel names prefixed "sNN_";
    False when the page has no column of the counter."""
    cols = [i for i, h in enumerate(header)
            if stability.counter_of(h) == counter and not stability.is_fixed_column(h)]
    if not cols or "Kernel Name" not in header:
        return False
    name, body = header.index("Kernel Name"), []
    for j, factor in enumerate(factors):
        for n, row in enumerate(launches):
            r = list(row)
            r[0] = str(j * len(launches) + n)
            r[name] = f"s{j:02d}_{r[name]}"
            for i in cols:
                r[i] = stability.jitter(r[i], factor)
            buf = io.StringIO()
            csv.writer(buf, quoting=csv.QUOTE_ALL, lineterminator="").writerow(r)
            body.append(buf.getvalue())
    with open(dst, "w", newline="") as f:
        f.write("\n".join([line for line in head if line] + body) + "\n")
    return True


def sweeps(feedback, steps):
    """(name, block, grid) -> [(category, estimate)] over the factors, for kernels whose every
    copy was analyzed as one kernel."""
    seen = {}
    for k in feedback["kernels"]:
        if k.get("launch_ids") or len(k["name"]) < 4 or k["name"][0] != "s":
            continue
        j = int(k["name"][1:3])
        first = k["findings"][0] if k["findings"] else {}
        seen.setdefault((k["name"][4:], k["block"], k["grid"]), {})[j] = (
            k["bottleneck"] or "(none)", first.get("estimated_speedup"))
    return {key: [d[j] for j in range(steps)] for key, d in seen.items() if len(d) == steps}


def judge(seq, factors, jump):
    """(the categories' runs if one comes back, else None; the steps of the lead's estimate)."""
    runs = [seq[0][0]]
    for category, _ in seq[1:]:
        if category != runs[-1]:
            runs.append(category)
    steps = []
    for j in range(1, len(seq)):
        (c0, e0), (c1, e1) = seq[j - 1], seq[j]
        if c0 == c1 and e0 is not None and e1 is not None and abs(e1 - e0) >= jump:
            steps.append(f"{c0} {e0:.0f}% -> {e1:.0f}% at x{factors[j - 1]:.3f}-{factors[j]:.3f}")
    return (runs if len(runs) != len(set(runs)) else None), steps


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("profeed")
    parser.add_argument("--counters", default=",".join(COUNTERS),
                        help="counters to sweep, comma-separated (default: the units, lanes, sector use, "
                        "occupancy and time)")
    parser.add_argument("--low", type=float, default=0.7, help="the smallest factor (0.7)")
    parser.add_argument("--high", type=float, default=1.3, help="the largest factor (1.3)")
    parser.add_argument("--steps", type=int, default=25, help="factors from --low to --high (25)")
    parser.add_argument("--jump", type=float, default=8.0,
                        help="list steps of the lead's estimate of this many points or more (8)")
    parser.add_argument("--capture", default="", help="only captures whose label contains this")
    args = parser.parse_args(argv[1:])
    if not os.access(args.profeed, os.X_OK):
        parser.error(f"{args.profeed!r} is not an executable")
    if not 2 <= args.steps <= 100 or not 0 < args.low < args.high:
        parser.error("--steps must be 2..100 and 0 < --low < --high")
    factors = [args.low + (args.high - args.low) * j / (args.steps - 1) for j in range(args.steps)]
    kernels = oscillations = steps = 0
    for corpus, folder, _, _ in accuracy.CAPTURES:
        if "agents" in corpus or args.capture not in corpus:
            continue
        with tempfile.TemporaryDirectory() as tmp:
            pages = accuracy.capture_pages(folder, ["core_mwa_raw.csv"], tmp)
            if pages is None:
                continue
            head, header, launches = read_page(pages[0])
            if header is None or not launches:
                continue
            counted = False
            for counter in args.counters.split(","):
                dst = os.path.join(tmp, f"sweep-{counter}.csv")
                if not swept_page(head, header, launches, counter, factors, dst):
                    continue
                out = subprocess.run([args.profeed, "analyze", "--format", "json", "--min-share", "0", dst],
                                     capture_output=True, text=True)
                if out.returncode not in (0, 3):
                    print(f"{corpus} / {counter}: profeed exit {out.returncode}: {out.stderr.strip()[:200]}")
                    continue
                for (name, _, _), seq in sweeps(json.loads(out.stdout), args.steps).items():
                    kernels += not counted
                    runs, jumps = judge(seq, factors, args.jump)
                    if runs:
                        oscillations += 1
                        print(f"{corpus} / {counter} / {name[:60]}: {' > '.join(runs)}", flush=True)
                    for j in jumps:
                        steps += 1
                        print(f"{corpus} / {counter} / {name[:60]}: step {j}", flush=True)
                counted = True
    print(f"\n{kernels} kernels, counters {args.counters}, x{args.low:g}-x{args.high:g} in {args.steps} "
          f"steps: {oscillations} sweeps whose first finding comes back after another, {steps} steps of "
          f"{args.jump:g} points or more in the lead's estimate")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
