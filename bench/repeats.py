#!/usr/bin/env python3
"""bench/repeats.py PROFEED: whether profeed's close calls foretell what a real second capture of
the same kernels says.

bench/stability.py models a second profile with noise; this reads the real ones. Captures of
bench/accuracy.py's CAPTURES that share a truth table and a fileset and ran on the same GPU are
repeats of the same program (kernels.cu and corpus v2 on four days, corpus v51's workloads twice).
For every pair of repeats and every kernel of the truth table in both, it compares the first
findings under the default plan (core_mwa_raw.csv; a compute bound's pipe counts as part of it, as
in bench/stability.py), and for each change of limiter whether either
capture's close call (kernels[].close_call, analyzer/ncu/ncu_noise.h) named the other's. A pair
whose raw pages read different metrics is a change of plan, not noise: its changes are counted
apart. Kernels named a close call in either capture that kept their limiter are counted too.

To add repeats, capture the same program again under the default plan
(deploy/gpu-corpus.sh), commit it beside the first and list it in REPEATS below (captures kept
only as repeats, which the accuracy table does not count again) or in bench/accuracy.py's
CAPTURES. Exit status 0 always: this measures, it does not gate.
"""
import argparse
import csv
import itertools
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import accuracy  # noqa: E402  (the captures, the truth tables and the way profeed is run)
import stability  # noqa: E402  (a first finding as repeats compare it: category, and unit)

PAGE = "core_mwa_raw.csv"

# Captures kept only as repeats of one in accuracy.CAPTURES: the same program under the default
# plan on the same GPU, in one device call each (2026-12-05: corpus v51's workloads four times,
# v3's three times, the plan of 2026-12-04b).
REPEATS = [(f"h200-v51 workloads 12-05 r{i}", f"h200-v51/workloads-2026-12-05-r{i}", "h200-v51", "workloads")
           for i in range(1, 5)] + \
          [(f"h200-v3 workloads 12-05 r{i}", f"h200-v3/workloads-2026-12-05-r{i}", "h200-v3", "workloads")
           for i in range(1, 4)]


def columns(path):
    """The metric columns a raw page read."""
    with open(path, newline="", errors="replace") as f:
        for row in csv.reader(f):
            if row and row[0] == "ID":
                return frozenset(row)
    return frozenset()


def verdicts(profeed, folder, truth, fileset):
    """(kernel -> (limiter, categories its close call named)), the page's columns; None without
    the default plan's page."""
    with tempfile.TemporaryDirectory() as tmp:
        pages = accuracy.capture_pages(folder, [PAGE], tmp)
        if pages is None:
            return None
        feedback = accuracy.run(profeed, pages)
        keys = accuracy.launch_keys(pages[0])
        cols = columns(pages[0])
    out = {}
    for kernel, _, k in accuracy.truth_kernels(feedback, keys, truth, fileset):
        if k:
            call = k.get("close_call") or {}
            out[kernel] = (stability.lead(k["bottleneck"], k.get("bottleneck_unit")) or "(none)",
                           {stability.lead(o["category"], o.get("unit")) for o in call.get("other_firsts", [])})
    return out, cols


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("profeed")
    args = parser.parse_args(argv[1:])
    if not os.access(args.profeed, os.X_OK):
        parser.error(f"{args.profeed!r} is not an executable")
    groups = {}
    for corpus, folder, truth_dir, fileset in accuracy.CAPTURES + REPEATS:
        if "agents" in corpus:
            continue
        gpu = "H100" if "H100" in corpus else "H200"
        groups.setdefault((truth_dir, fileset, gpu), []).append((corpus, folder))
    totals = {"pairs": 0, "kernel pairs": 0, "changed": 0, "changed, named": 0, "changed with the plan": 0,
              "named, held": 0}
    for (truth_dir, fileset, _), captures in groups.items():
        if len(captures) < 2:
            continue
        truth = accuracy.read_truth(truth_dir)
        read = [(corpus, verdicts(args.profeed, folder, truth, fileset)) for corpus, folder in captures]
        read = [(corpus, r) for corpus, r in read if r is not None]
        for (ca, (a, cols_a)), (cb, (b, cols_b)) in itertools.combinations(read, 2):
            totals["pairs"] += 1
            plan = cols_a != cols_b
            for kernel in sorted(set(a) & set(b)):
                totals["kernel pairs"] += 1
                (la, na), (lb, nb) = a[kernel], b[kernel]
                if la == lb:
                    totals["named, held"] += bool(na or nb)
                    continue
                named = lb in na or la in nb
                said = "named by a close call" if named else "not named by either close call"
                if plan:
                    totals["changed with the plan"] += 1
                    print(f"{ca} / {cb} / {kernel}: {la} -> {lb} (the pages read different metrics; {said})")
                    continue
                totals["changed"] += 1
                totals["changed, named"] += named
                print(f"{ca} / {cb} / {kernel}: {la} -> {lb}: {said}")
    print(f"\n{totals['pairs']} pairs of repeated captures, {totals['kernel pairs']} kernels in both: "
          f"{totals['changed']} changed limiter on the same plan, {totals['changed, named']} of them named "
          f"by a close call; {totals['changed with the plan']} changed with the plan; "
          f"{totals['named, held']} named a close call and held")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
