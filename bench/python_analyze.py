#!/usr/bin/env python3
"""The cost of profeed.analyze() from Python against the C library's own
in-process analysis (bench/farm_load --analyze) on the same capture.

  bench/python_analyze.py [--build BUILD] [--jobs N] [FILE...]

Installs the build under BUILD/bench-python-root (DESTDIR), imports the
package from there with Debian's python3 (this script re-executes itself
under /usr/bin/python3 when run by another interpreter), and times:
  - farm_load --analyze FILE... (profeed_analyze_files(), JSON, N calls, p50);
  - profeed.analyze() on the same files' contents, held in memory as
    KernelFoundry's outputs dict holds them (one pass per file): the text
    feedback plus the feedback as a dict (its JSON document, parsed), p50;
  - the same with fmt="json", and with launches=True (the per-launch data);
in --rounds rounds, each measuring the in-process floor right before the
Python calls. Prints the per-round ratios and their median. Not a test.
"""

import argparse
import os
import pathlib
import statistics
import subprocess
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent
DEFAULT_FILES = [ROOT / "tests/fixtures/ncu/h200/full_raw.csv", ROOT / "tests/fixtures/ncu/h200/full_details.csv"]


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default=str(ROOT / "build"))
    ap.add_argument("--jobs", type=int, default=200)
    ap.add_argument("--warmup", type=int, default=20)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("files", nargs="*", default=[str(p) for p in DEFAULT_FILES])
    args = ap.parse_args()
    build = pathlib.Path(args.build).resolve()
    if os.path.exists("/usr/bin/python3") and os.path.realpath(sys.executable) != os.path.realpath("/usr/bin/python3"):
        os.execv("/usr/bin/python3", ["/usr/bin/python3", __file__] + sys.argv[1:])

    root = build / "bench-python-root"
    subprocess.run(["cmake", "--install", str(build)], env={**os.environ, "DESTDIR": str(root)}, check=True,
                   stdout=subprocess.DEVNULL)
    pkg = sorted(root.rglob("dist-packages/profeed/__init__.py"))[0].parent.parent
    sys.path.insert(0, str(pkg))
    import profeed  # noqa: E402

    outputs = {f"ncu.{i:03d}": {"ncu_report.csv": pathlib.Path(f).read_text()} for i, f in enumerate(args.files)}

    def floor() -> float:
        out = subprocess.run([str(build / "bench/farm_load"), "--analyze", "--jobs", str(args.jobs), "--warmup",
                              str(args.warmup)] + args.files, capture_output=True, text=True, check=True)
        return float(out.stdout.split("p50_ms=")[1].split()[0])

    def timed(**kw) -> float:
        lat = []
        for i in range(args.warmup + args.jobs):
            t = time.perf_counter()
            profeed.analyze(outputs, {}, profiler="ncu", **kw)
            if i >= args.warmup:
                lat.append((time.perf_counter() - t) * 1000)
        return statistics.median(lat)

    # This machine's speed drifts over minutes: each round measures the C
    # floor right before the Python calls, and the ratio is taken per round.
    rows = []
    for r in range(args.rounds):
        rows.append((floor(), timed(fmt="text"), timed(fmt="json"), timed(fmt="text", launches=True)))
        c, t, j, l = rows[-1]
        print(f"round {r + 1}: in-process {c:.2f} ms | analyze text {t:.2f} ms ({t / c:.2f}x) | "
              f"json {j:.2f} ms ({j / c:.2f}x) | text + launches {l:.2f} ms ({l / c:.2f}x)")
    med = [statistics.median(col) for col in zip(*rows)]
    ratios = [statistics.median(row[k] / row[0] for row in rows) for k in (1, 2, 3)]
    print(f"median: in-process {med[0]:.2f} ms; profeed.analyze text {med[1]:.2f} ms ({ratios[0]:.2f}x), "
          f"json {med[2]:.2f} ms ({ratios[1]:.2f}x), text + launches {med[3]:.2f} ms ({ratios[2]:.2f}x)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
