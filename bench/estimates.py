#!/usr/bin/env python3
"""bench/estimates.py PROFEED [--plan core|full] [--markdown | --check]: profeed's gain estimates
against measured lever speedups.

For every row of tests/fixtures/ncu/lever_speedups.tsv (a lever timed on a corpus kernel: the
finding category the corpus's rule gives the lever, and the measured speedup, kernel time over
lever time, of the median run), runs `PROFEED analyze --format json --min-share 0` on the row's
capture and takes profeed's first finding of the lever's category on that kernel:

  category    as bench/accuracy.py judges it: `compute_bound:PIPE` is a compute_bound finding
              whose title names PIPE (a "was not measured" title names none); `a|b` takes the
              first finding of either category (levers within 5% of each other);
  kernel      matched by its name up to "(", or `#ID` for the kernel group of launch ID;
  estimate    the finding's `estimated_speedup` is the share of the kernel's time saved, in
              percent (NCU's convention): a speedup of 1 / (1 - g).

Plans: core (the default) reads the capture's core_mwa_raw.csv as the default plan collects it
today (bench/accuracy.py, as_the_plan_collects), or full_raw.csv where a capture has no default
plan file; full reads full_raw.csv (with full_details.csv where kept, as accuracy.py's full
plan). A NAME.csv.xz fixture is read from its unpacked copy.

Prints one line per lever (estimate, measured, their ratio, the finding's place in the kernel's
list, or what led where no finding of the category was made) and a summary: how many levers had
a finding of their category, the median of estimate / measured, the share within a factor of
1.25, how many paying levers (measured >= 1.10x) got an estimate of at least 1.10x, and how many
levers that did not pay (< 1.05x) got one over 1.10x (false promises). With --markdown, the same
as markdown tables. Exit status 0: this measures, it does not gate. --check instead checks the
table itself (tests/CMakeLists.txt runs it): every row's source line exists and holds its speedup,
and every row's capture and kernel resolve; it prints each problem and exits 1 on any.
"""
import csv
import math
import os
import statistics
import sys
import tempfile

sys.dont_write_bytecode = True  # importing accuracy leaves no __pycache__ in bench/
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import accuracy  # noqa: E402  (run, unpacked, as_the_plan_collects, launch_keys, judge, usage_status)

FIXTURES = accuracy.FIXTURES
LEVERS = os.path.join(FIXTURES, "lever_speedups.tsv")

PAID = 1.10      # a lever that paid: measured at least this
UNPAID = 1.05    # a lever that did not: measured under this
PROMISE = 1.10   # an estimate that promises a gain: over this
CLOSE = 1.25     # "within a factor of": |log(est / measured)| <= log(CLOSE)
WORST = 10       # over- and under-estimates listed


def read_levers(path=LEVERS):
    with open(path, newline="") as f:
        return [dict(r) for r in csv.DictReader(f, delimiter="\t")]


def plan_files(folder, plan):
    """The capture's files for the plan (paths that exist as NAME or NAME.xz), or None."""
    def have(name):
        p = os.path.join(FIXTURES, folder, name)
        return os.path.exists(p) or os.path.exists(p + ".xz")
    if plan == "core" and have("core_mwa_raw.csv"):
        return ["core_mwa_raw.csv"]
    if have("full_raw.csv"):
        return ["full_raw.csv"] + (["full_details.csv"] if plan == "full" and have("full_details.csv") else [])
    return None


def analyze(profeed, folder, files):
    """(feedback, launch keys) for the capture's files under the plan."""
    paths = [os.path.join(FIXTURES, folder, f) for f in files]
    with tempfile.TemporaryDirectory() as tmp:
        local = [accuracy.as_the_plan_collects(p, tmp) if p.endswith("core_mwa_raw.csv")
                 else accuracy.unpacked(p, tmp) for p in paths]
        feedback = accuracy.run(profeed, local)
        keys = accuracy.launch_keys(local[0])
    return feedback, keys


def find_kernel(feedback, keys, kernel):
    """The kernel's entry in the feedback: by name up to "(", or "#ID" by its launch's key."""
    if kernel.startswith("#"):
        return accuracy.kernel_for_id(feedback, keys, int(kernel[1:]))
    for k in feedback["kernels"]:
        if k["name"].split("(")[0] == kernel:
            return k
    return None


def as_speedup(pct):
    """estimated_speedup (percent of the time saved) as a speedup; None when absent."""
    if pct is None:
        return None
    g = pct / 100.0
    return math.inf if g >= 1 else 1.0 / (1.0 - g)


def evaluate(profeed, rows, plan):
    cache = {}
    out = []
    for r in rows:
        res = dict(r)
        res.update(measured=float(r["speedup"]), est=None, rank=None, note="")
        folder = r["capture"]
        if folder not in cache:
            files = plan_files(folder, plan)
            cache[folder] = analyze(profeed, folder, files) if files else None
        if cache[folder] is None:
            res["note"] = "capture has no file of the plan"
            out.append(res)
            continue
        feedback, keys = cache[folder]
        k = find_kernel(feedback, keys, r["kernel"])
        if k is None:
            res["note"] = "kernel not in the capture"
            out.append(res)
            continue
        for i, f in enumerate(k["findings"]):
            if accuracy.judge(f, r["category"]) == "right":
                res["est"] = as_speedup(f.get("estimated_speedup"))
                res["rank"] = i + 1
                if res["est"] is None:
                    res["note"] = "finding has no estimate"
                break
        else:
            first = k["findings"][0] if k["findings"] else None
            res["note"] = (f"no finding; first {first['category']} "
                           f"{fmt(as_speedup(first.get('estimated_speedup')))}" if first else "no finding; none at all")
        out.append(res)
    return out


def fmt(x, digits=2):
    if x is None:
        return "-"
    if math.isinf(x):
        return "inf"
    return f"{x:.{digits}f}x"


def fmt_ratio(q):
    return f"{q:.2f}" if q >= 0.1 else f"{q:.3f}"


def ratio(res):
    if res["est"] is None:
        return None
    return res["est"] / res["measured"]


def summary(results):
    n = len(results)
    found = [r for r in results if r["est"] is not None]
    ratios = [ratio(r) for r in found]
    close = [q for q in ratios if abs(math.log(q)) <= math.log(CLOSE)] if ratios else []
    # with no finding counted as no gain claimed (1.0x)
    all_ratios = [(r["est"] if r["est"] is not None else 1.0) / r["measured"] for r in results]
    all_close = [q for q in all_ratios if abs(math.log(q)) <= math.log(CLOSE)]
    paid = [r for r in results if r["measured"] >= PAID]
    paid_seen = [r for r in paid if r["est"] is not None and r["est"] >= PAID]
    unpaid = [r for r in results if r["measured"] < UNPAID]
    promised = [r for r in unpaid if r["est"] is not None and r["est"] > PROMISE]
    return [
        ("levers", f"{n}"),
        ("with a finding of the lever's category", f"{len(found)} of {n}"),
        ("median estimate / measured (levers with a finding)",
         f"{statistics.median(ratios):.3f}" if ratios else "-"),
        (f"within a factor of {CLOSE} (levers with a finding)",
         f"{len(close)} of {len(found)} ({100.0 * len(close) / len(found):.0f}%)" if found else "-"),
        (f"within a factor of {CLOSE} (all levers, no finding as 1.0x)",
         f"{len(all_close)} of {n} ({100.0 * len(all_close) / n:.0f}%)" if n else "-"),
        (f"levers that paid (>= {PAID:.2f}x) estimated at >= {PAID:.2f}x",
         f"{len(paid_seen)} of {len(paid)}"),
        (f"levers that did not pay (< {UNPAID:.2f}x) estimated over {PROMISE:.2f}x (false promises)",
         f"{len(promised)} of {len(unpaid)}"),
    ]


def worst(results):
    found = [r for r in results if r["est"] is not None]
    over = sorted((r for r in found if ratio(r) > 1), key=ratio, reverse=True)[:WORST]
    under = sorted((r for r in found if ratio(r) < 1), key=ratio)[:WORST]
    return over, under


def row_cells(r):
    return [r["corpus"], r["kernel"], r["lever"], r["category"], r["when"], fmt(r["est"]),
            fmt(r["measured"]), fmt_ratio(ratio(r)) if r["est"] is not None else "-",
            str(r["rank"]) if r["rank"] else "-", r["note"]]


HEAD = ["corpus", "kernel", "lever", "category", "when", "est.", "measured", "est./meas.", "#", "note"]


def print_text(results, plan):
    print(f"plan: {plan}")
    print(f"{'corpus':9s} {'kernel':26s} {'lever':30s} {'category':22s} {'when':6s} "
          f"{'est.':>7s} {'measured':>8s} {'ratio':>6s} {'#':>2s}  note")
    for r in results:
        c = row_cells(r)
        print(f"{c[0]:9s} {c[1][:26]:26s} {c[2][:30]:30s} {c[3][:22]:22s} {c[4]:6s} "
              f"{c[5]:>7s} {c[6]:>8s} {c[7]:>6s} {c[8]:>2s}  {c[9]}")
    for label, part in (("all", results), ("before (the corpus runs)", [r for r in results if r["when"] == "before"]),
                        ("after (timed after the truth)", [r for r in results if r["when"] == "after"])):
        if not part:
            continue
        print(f"\nsummary, {label}:")
        for k, v in summary(part):
            print(f"  {k}: {v}")
    over, under = worst(results)
    for label, part in (("largest over-estimates", over), ("largest under-estimates", under)):
        print(f"\n{label} (estimate / measured):")
        for r in part:
            print(f"  {fmt_ratio(ratio(r)):>6s}  {r['corpus']} {r['kernel']} ({r['lever']}, {r['category']}): "
                  f"est. {fmt(r['est'])}, measured {fmt(r['measured'])}")


def print_markdown(results, plan):
    print(f"Plan: {plan}.\n")
    print("| " + " | ".join(HEAD) + " |")
    print("|---|---|---|---|---|---:|---:|---:|---:|---|")
    for r in results:
        print("| " + " | ".join(c.replace("|", "\\|") for c in row_cells(r)) + " |")
    for label, part in (("all", results), ("before", [r for r in results if r["when"] == "before"]),
                        ("after", [r for r in results if r["when"] == "after"])):
        if not part:
            continue
        print(f"\n**Summary, {label}**\n")
        print("| | |\n|---|---:|")
        for k, v in summary(part):
            print(f"| {k} | {v} |")
    over, under = worst(results)
    for label, part in (("Largest over-estimates", over), ("Largest under-estimates", under)):
        print(f"\n**{label}**\n")
        print("| corpus | kernel | lever | category | est. | measured | est./meas. |")
        print("|---|---|---|---|---:|---:|---:|")
        for r in part:
            print(f"| {r['corpus']} | {r['kernel']} | {r['lever']} | {r['category'].replace('|', chr(92) + '|')} | "
                  f"{fmt(r['est'])} | {fmt(r['measured'])} | {fmt_ratio(ratio(r))} |")


def check(rows, results):
    """Problems with the table: a source line that is not there or does not hold the speedup, a
    capture or kernel that does not resolve."""
    problems = []
    for r, res in zip(rows, results):
        where = f"{r['corpus']} {r['kernel']} {r['lever']}"
        path, _, line = r["source"].rpartition(":")
        try:
            with open(os.path.join(FIXTURES, path)) as f:
                text = f.read().split("\n")
            n = int(line)
            cited = text[n - 1] if 1 <= n <= len(text) else None
        except (OSError, ValueError):
            cited = None
        x = float(r["speedup"])
        forms = {r["speedup"], f"{x:.2f}", f"{x:.3f}", f"{x:.2f}".rstrip("0").rstrip(".")}
        if cited is None:
            problems.append(f"{where}: source {r['source']} is not there")
        elif not any(form in cited for form in forms):
            problems.append(f"{where}: {r['source']} does not hold {r['speedup']}")
        if res["note"] in ("capture has no file of the plan", "kernel not in the capture"):
            problems.append(f"{where}: {res['note']}")
    return problems


def main(argv):
    try:
        return s_main(argv)
    except BrokenPipeError:  # output piped into head
        return 0


def s_main(argv):
    args = argv[1:]
    status = accuracy.usage_status(args, __doc__, "estimates")
    if status is not None:
        return status
    profeed = args[0]
    plan = "core"
    if "--plan" in args:
        i = args.index("--plan")
        plan = args[i + 1] if i + 1 < len(args) else ""
        if plan not in ("core", "full"):
            print("--plan takes core or full", file=sys.stderr)
            return 2
    rows = read_levers()
    results = evaluate(profeed, rows, plan)
    if "--check" in args:
        problems = check(rows, results)
        for p in problems:
            print(p, file=sys.stderr)
        print(f"lever table: {len(rows)} rows, {len(problems)} problem(s)")
        return 1 if problems else 0
    if "--markdown" in args:
        print_markdown(results, plan)
    else:
        print_text(results, plan)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
