#!/usr/bin/python3
"""Make a large, realistic ncu CSV by repeating the launches of a real one.

Raw page (default): keeps the real header and units row, then writes the real
data rows round-robin (real launch i % n for new launch i) with new sequential
IDs 0..N-1 until N launches.  Everything but the ID field is byte-for-byte the
real row (auto-scaled units, thousands separators, quoting).

Details page (--details): the same for a `--page details` CSV: launch i gets
all the metric and rule rows of real launch i % n (in their real order, with
their real 16/20-field shapes), with ID i.  Because both pages use the same
i -> i % n mapping, a raw file and a details file generated with the same N
describe the same launches.

Lines that do not start with '"' (==PROF== lines, program stdout) are dropped.
Output is deterministic (no randomness, no timestamps).

Usage: gen_launches.py [--launches N] [--details] SRC.csv OUT.csv
"""

import argparse
import sys


def split_id(line):
    """('"ID"' value, rest of the line after the first field)."""
    if not line.startswith('"'):
        raise ValueError("line does not start with a quoted field")
    end = line.index('"', 1)
    return line[1:end], line[end + 1:]


def read_rows(path):
    with open(path, "r", encoding="utf-8", newline="") as f:
        lines = [line for line in f if line.startswith('"')]
    if len(lines) < 2:
        raise SystemExit(f"{path}: no CSV rows")
    # a file that does not end in a newline: give its last row one
    if not lines[-1].endswith("\n"):
        lines[-1] += "\r\n" if lines[0].endswith("\r\n") else "\n"
    return lines[0], lines[1:]


def gen_raw(src, out, n):
    header, rows = read_rows(src)
    if not header.startswith('"ID"'):
        raise SystemExit(f"{src}: first column is not ID")
    head = [header]
    data = []
    for row in rows:
        rid, rest = split_id(row)
        if rid == "":
            head.append(row)          # units row (empty ID)
        else:
            data.append(rest)
    if not data:
        raise SystemExit(f"{src}: no launches")
    with open(out, "w", encoding="utf-8", newline="") as f:
        f.writelines(head)
        k = len(data)
        for i in range(n):
            f.write(f'"{i}"')
            f.write(data[i % k])
    return k


def gen_details(src, out, n):
    header, rows = read_rows(src)
    if '"Metric Name"' not in header:
        raise SystemExit(f"{src}: not a details page (no Metric Name column)")
    order = []        # real launch IDs in first-seen order
    blocks = {}       # real ID -> list of rest-of-line strings
    for row in rows:
        rid, rest = split_id(row)
        if rid not in blocks:
            blocks[rid] = []
            order.append(rid)
        blocks[rid].append(rest)
    try:
        order.sort(key=int)
    except ValueError:
        pass
    with open(out, "w", encoding="utf-8", newline="") as f:
        f.write(header)
        k = len(order)
        for i in range(n):
            prefix = f'"{i}"'
            f.writelines(prefix + rest for rest in blocks[order[i % k]])
    return k


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--launches", "-n", type=int, default=5000,
                    help="number of launches to write (default 5000)")
    ap.add_argument("--details", action="store_true",
                    help="SRC is a --page details CSV")
    ap.add_argument("src")
    ap.add_argument("out")
    args = ap.parse_args(argv)
    if args.launches < 1:
        ap.error("--launches must be >= 1")
    fn = gen_details if args.details else gen_raw
    k = fn(args.src, args.out, args.launches)
    print(f"{args.out}: {args.launches} launches from {k} real ones in {args.src}",
          file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
