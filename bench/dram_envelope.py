#!/usr/bin/env python3
"""bench/dram_envelope.py [--top N]: the best DRAM throughput the committed captures reach, by the
share of DRAM's bytes that are writes.

HBM turns the bus around between reads and writes, so a mix may attain less of the peak than reads
or writes alone; profeed reads DRAM against one attainable ceiling (NCU_ATTAIN_DRAM, 90%). Every
kernel of every committed raw page (tests/fixtures/ncu/**/{full_raw,levers_full_raw,
core_mwa_raw}.csv[.xz]) that moved 50 MB or more gives a point: DRAM's read and write throughput as
a percentage of peak (dram__bytes_read/write.sum.pct_of_peak_sustained_elapsed, added) against its
write share. The best points of each tenth of the write share are an envelope of what the H200
attains (and, in the captures made on it, the H100): a lower bound on the ceiling, as the kernels
were not all written to reach it.

Prints, for each tenth, how many kernels fall in it and the best N (3) with where they come from.
"""
import argparse
import csv
import glob
import lzma
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FIXTURES = os.path.join(ROOT, "tests", "fixtures", "ncu")
READ = "dram__bytes_read.sum"
WRITE = "dram__bytes_write.sum"
SCALE = {"byte": 1, "Kbyte": 1e3, "Mbyte": 1e6, "Gbyte": 1e9, "Tbyte": 1e12}
MIN_BYTES = 50e6


def number(text):
    try:
        return float(text.replace(",", ""))
    except ValueError:
        return None


def points(path):
    opener = lzma.open if path.endswith(".xz") else open
    with opener(path, "rt", errors="replace") as f:
        rows = list(csv.reader(line for line in f if line.startswith('"')))
    if len(rows) < 3:
        return
    header, units = rows[0], rows[1]
    ix = {name: i for i, name in enumerate(header)}
    pct = [READ + ".pct_of_peak_sustained_elapsed", WRITE + ".pct_of_peak_sustained_elapsed"]
    if not all(name in ix for name in [READ, WRITE] + pct):
        return
    for row in rows[2:]:
        if len(row) != len(header) or not row[0].isdigit():
            continue
        values = [number(row[ix[name]]) for name in [READ, WRITE] + pct]
        if None in values:
            continue
        read = values[0] * SCALE.get(units[ix[READ]], 1)
        write = values[1] * SCALE.get(units[ix[WRITE]], 1)
        if read + write < MIN_BYTES:
            continue
        yield (values[2] + values[3], write / (read + write), os.path.relpath(path, FIXTURES),
               row[ix["Kernel Name"]][:60])


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--top", type=int, default=3, help="the best points of each tenth (3)")
    args = parser.parse_args(argv[1:])
    paths = []
    for name in ("full_raw.csv", "levers_full_raw.csv", "core_mwa_raw.csv"):
        paths += glob.glob(os.path.join(FIXTURES, "**", name), recursive=True)
        paths += glob.glob(os.path.join(FIXTURES, "**", name + ".xz"), recursive=True)
    tenths = {}
    for path in sorted(paths):
        for pct, share, where, kernel in points(path):
            tenths.setdefault(min(int(share * 10), 9), []).append((pct, where, kernel))
    if not tenths:
        print("dram_envelope: no capture with DRAM's read and write bytes", file=sys.stderr)
        return 1
    print("write share  kernels  best DRAM % of peak (capture, kernel)")
    for tenth in sorted(tenths):
        best = sorted(tenths[tenth], reverse=True)[:args.top]
        print(f"{tenth / 10:.1f}-{(tenth + 1) / 10:.1f}  {len(tenths[tenth]):7d}  "
              + "; ".join(f"{pct:.1f} ({where}, {kernel})" for pct, where, kernel in best))
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv))
    except BrokenPipeError:
        sys.exit(0)
