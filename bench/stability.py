#!/usr/bin/env python3
"""bench/stability.py PROFEED [--trials N] [--noise PCT] [--plan core|full|detailed|ka] [--seed S]
[--jump POINTS]: whether profeed's first finding survives run-to-run noise in the counters.

Two profiles of the same kernel never read the same counters: ncu replays each pass, and clocks,
DRAM refresh and the other tenants of a shared GPU move every count a little (the H200 repeats of
kernels.cu and corpus v2 in tests/fixtures/ncu differ by a median 0%, 0.5% at the 90th percentile
and up to 25% for rare stall reasons). Feedback whose first finding flips under that noise sends an
agent in a loop two ways on the same kernel; a rule whose threshold sits where the corpora's kernels
happen to fall is one that was fitted to them.

For every ground-truth capture of the plan (bench/accuracy.py's CAPTURES), runs profeed on the
capture as it is and on N copies whose measured counters are each scaled by an independent factor
exp(g), g normal with standard deviation PCT/100 (launch configuration, device attributes, peak
rates and the counts ncu derives from the executed SASS are left as they are: they do not change
between profiles; a counter's rollups and forms, .sum, .max,
.pct_of_peak..., read in one pass, move together). For each kernel it counts the trials whose
first finding has the category the unperturbed capture gives (and, where the category spans
several units, the unit: a compute bound on another pipe has another action), and the trials that
are right by bench/accuracy.py's judge.

Prints the kernels whose first finding moved in any trial, with the categories it moved to, the
kernels whose first finding held but whose estimate moved by --jump points of the time or more (a
step in a model), and the totals: kernels stable in every trial, and right / kernels over all
trials against right / kernels without noise. Last, how profeed's own close calls (each kernel's
close_call: its verdict judged again on noisy readings of its counters, analyzer/ncu/ncu_noise.h)
agree with the trials here, which are drawn independently: kernels named a close call that moved
or held, kernels not named that moved or held, and the moved ones whose close call named the
category they moved to. Exit status 0 always: this measures, it does not gate.
"""
import argparse
import csv
import io
import math
import os
import random
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import accuracy  # noqa: E402  (the captures, the judge and the way profeed is run)

# Columns that are configuration or constants, not counts, and the counts ncu derives from the
# executed SASS (bytes used per sector, lanes per instruction, spill instructions): those read the
# same in every repeat of kernels.cu and v2 on the H200. Left as captured.
FIXED_PREFIXES = ("launch__", "device__", "sm__maximum_warps", "ID", "Process", "Host", "Kernel",
                  "Context", "Stream", "Block Size", "Grid Size", "Device", "CC",
                  "sass__", "smsp__sass_", "sm__sass_", "smsp__thread_inst_executed_per_inst_executed",
                  "smsp__thread_inst_executed_pred_on_per_inst_executed")
# Sections of the details page whose values are the launch's configuration.
FIXED_SECTIONS = ("Launch Statistics",)
FIXED_DETAIL_WORDS = ("Block Limit", "Theoretical", "Registers", "Shared Memory Config",
                      "Driver Shared", "Threads", "Waves Per SM", "Grid Size", "Block Size",
                      "# SMs", "Function Cache", "Stack Size", "Uses Green Context")


PLAN_FILES = {"core": "core", "full": "full", "detailed": "detailed (KernelFoundry)",
              "ka": "KernelAgent's 29 metrics"}


def is_fixed_column(name):
    return name.startswith(FIXED_PREFIXES) or (".peak_sustained" in name
                                               and "pct_of_peak" not in name)


def counter_of(name):
    """The counter a column reads: its rollups (.sum, .avg, .max, .min) and forms (.per_second,
    .pct_of_peak_sustained_elapsed) are one count read once, so they move together. The kernel's
    time in every form (duration, elapsed and active cycles) is one reading too: a profile that
    runs longer counts more of each, and idle SMs are a difference of two of them that noise
    drawn apart would invent."""
    base = name.split(".")[0]
    if base == "gpu__time_duration" or base.endswith("__cycles_elapsed") or base.endswith("__cycles_active"):
        return "time"
    return base


def jitter(text, factor):
    """The cell scaled by factor, in the form it had; unchanged when not a number."""
    plain = text.replace(",", "")
    try:
        value = float(plain)
    except ValueError:
        return text
    if value == 0 or not math.isfinite(value):
        return text
    scaled = value * factor
    if "." not in plain and "e" not in plain.lower():
        return str(int(round(scaled)))
    decimals = len(plain.split(".")[1]) if "." in plain else 0
    return f"{scaled:.{max(decimals, 2)}f}"


def rewrite(src, dst, change):
    """Copies a capture's page, each quoted CSV row passed through change(row) (a list of cells,
    returned changed or as it was); ncu's own lines (==PROF==) are copied as they are."""
    with open(src, newline="", errors="replace") as f:
        lines = f.read().split("\n")
    out = []
    for line in lines:
        if line.startswith('"'):
            buf = io.StringIO()
            csv.writer(buf, quoting=csv.QUOTE_ALL, lineterminator="").writerow(
                change(next(csv.reader([line]))))
            line = buf.getvalue()
        out.append(line)
    with open(dst, "w", newline="") as f:
        f.write("\n".join(out))


def perturb_raw(src, dst, rng, sigma):
    """A raw page (a column a metric, a row a launch after the units row) with each launch's
    counters scaled."""
    state = {"header": None, "units": False}

    def change(row):
        header = state["header"]
        if header is None:
            if row[0] == "ID":
                state["header"] = row
            return row
        if not state["units"] and not row[0].isdigit():
            state["units"] = True  # the units row
            return row
        if len(row) != len(header):
            return row
        factor = {}
        for name in header:
            factor.setdefault(counter_of(name), math.exp(rng.gauss(0.0, sigma)))
        return [cell if is_fixed_column(header[i]) else jitter(cell, factor[counter_of(header[i])])
                for i, cell in enumerate(row)]

    rewrite(src, dst, change)


def perturb_details(src, dst, rng, sigma):
    """A details page (a row a metric of a launch) with each measured value scaled."""
    state = {"ix": None}

    def change(row):
        ix = state["ix"]
        if ix is None:
            if row[0] == "ID":
                state["ix"] = {h: i for i, h in enumerate(row)}
            return row
        if len(row) != len(ix) or "Metric Value" not in ix:
            return row
        section = row[ix["Section Name"]] if "Section Name" in ix else ""
        metric = row[ix["Metric Name"]] if "Metric Name" in ix else ""
        if section not in FIXED_SECTIONS and not any(w in metric for w in FIXED_DETAIL_WORDS):
            row[ix["Metric Value"]] = jitter(row[ix["Metric Value"]], math.exp(rng.gauss(0.0, sigma)))
        return row

    rewrite(src, dst, change)


def lead(category, unit):
    """A first finding as the trials compare it: its category, and the unit where the category
    spans several ("compute_bound:xu": a compute bound on another pipe is another lever)."""
    return f"{category}:{unit}" if unit else category


def close_call(k):
    """The other first findings profeed's own re-reading of the kernel under noise gave (its
    close_call, ncu_noise.h), or None where it did not judge."""
    call = k.get("close_call") if k else None
    return {lead(o["category"], o.get("unit")) for o in call["other_firsts"]} if call else None


def firsts_of(profeed, paths, keys, truth, fileset):
    """kernel label -> (first finding's category, verdict, its estimate: percent of the time,
    the other first findings profeed's close call names)."""
    result = {}
    for kernel, expect, k in accuracy.truth_kernels(accuracy.run(profeed, paths), keys, truth, fileset):
        finding = k["findings"][0] if k and k["findings"] else None
        result[kernel] = (lead(finding["category"], k.get("bottleneck_unit")) if finding else "(none)",
                          accuracy.judge(finding, expect),
                          finding.get("estimated_speedup") if finding else None, close_call(k))
    return result


def study(profeed, folder, files, truth, fileset, trials, sigma, seed):
    with tempfile.TemporaryDirectory() as tmp:
        base = accuracy.capture_pages(folder, files, tmp)
        if base is None:
            return None
        keys = accuracy.launch_keys(base[0])
        clean = firsts_of(profeed, base, keys, truth, fileset)
        moved = {k: {} for k in clean}
        right = {k: 0 for k in clean}
        jump = {k: 0.0 for k in clean}  # the most the lead's estimate moved, same category
        for t in range(trials):
            rng = random.Random(f"{seed}/{folder}/{t}")
            noisy = []
            for i, p in enumerate(base):
                dst = os.path.join(tmp, f"trial{t}-{i}-{os.path.basename(p)}")
                if "details" in os.path.basename(p) or os.path.basename(p) == "detailed.csv":
                    perturb_details(p, dst, rng, sigma)
                else:
                    perturb_raw(p, dst, rng, sigma)
                noisy.append(dst)
            for kernel, (category, verdict, estimate, _) in firsts_of(profeed, noisy, keys, truth,
                                                                      fileset).items():
                if category != clean[kernel][0]:
                    moved[kernel][category] = moved[kernel].get(category, 0) + 1
                elif estimate is not None and clean[kernel][2] is not None:
                    jump[kernel] = max(jump[kernel], abs(estimate - clean[kernel][2]))
                right[kernel] += verdict == "right"
    return clean, moved, right, jump


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("profeed")
    parser.add_argument("--trials", type=int, default=8, help="noisy copies of each capture (8)")
    parser.add_argument("--noise", type=float, default=2.0, help="percent, one sigma (2)")
    parser.add_argument("--plan", choices=list(PLAN_FILES), default="core",
                        help="core (default), full, or an agent's own capture: detailed "
                        "(KernelFoundry's --set detailed page), ka (KernelAgent's metrics)")
    parser.add_argument("--seed", default="1", help="the noise's seed: the same seed, the same copies (1)")
    parser.add_argument("--jump", type=float, default=8.0,
                        help="list leads whose estimate moved this many points of the time or more "
                        "while their category held (8)")
    args = parser.parse_args(argv[1:])
    if not os.access(args.profeed, os.X_OK):
        parser.error(f"{args.profeed!r} is not an executable")
    if args.trials < 1 or not 0 < args.noise < 50:
        parser.error("--trials must be at least 1 and --noise between 0 and 50")
    files = dict(accuracy.PLANS)[PLAN_FILES[args.plan]]
    agents = args.plan in ("detailed", "ka")
    kernels = stable = right_clean = right_noisy = jumps = 0
    calls = {"flagged, moved": 0, "flagged, held": 0, "not flagged, moved": 0, "not flagged, held": 0,
             "named where it moved": 0}
    for corpus, folder, truth_dir, fileset in accuracy.CAPTURES:
        if ("agents" in corpus) != agents:
            continue
        r = study(args.profeed, folder, files, accuracy.read_truth(truth_dir), fileset,
                  args.trials, args.noise / 100.0, args.seed)
        if r is None:
            continue
        clean, moved, right, jump = r
        for kernel, (category, verdict, estimate, others) in clean.items():
            kernels += 1
            if others is not None:
                calls[f"{'flagged' if others else 'not flagged'}, {'moved' if moved[kernel] else 'held'}"] += 1
                calls["named where it moved"] += bool(set(moved[kernel]) & others)
            stable += not moved[kernel]
            right_clean += verdict == "right"
            right_noisy += right[kernel]
            if moved[kernel]:
                to = ", ".join(f"{c} {n}/{args.trials}" for c, n in sorted(moved[kernel].items()))
                print(f"{corpus} / {kernel}: {category} ({verdict}) moved to {to}; "
                      f"right in {right[kernel]}/{args.trials}", flush=True)
            if jump[kernel] >= args.jump:
                jumps += 1
                print(f"{corpus} / {kernel}: {category}'s estimate {estimate:.0f}% moved by up to "
                      f"{jump[kernel]:.0f} points", flush=True)
    if kernels:
        print(f"\n{args.plan}, noise {args.noise}% (one sigma), {args.trials} trials: "
              f"{stable}/{kernels} kernels keep their first finding in every trial; right "
              f"{right_clean}/{kernels} without noise, {right_noisy / args.trials:.1f}/{kernels} "
              f"on average with it; {jumps} leads' estimates moved by {args.jump:g} points or more")
        judged = calls["flagged, moved"] + calls["flagged, held"] + calls["not flagged, moved"] + \
            calls["not flagged, held"]
        if judged:
            print(f"profeed's own close calls (close_call, {judged} kernels judged): "
                  + "; ".join(f"{key} {n}" for key, n in calls.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
