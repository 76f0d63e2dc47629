#!/usr/bin/python3
"""Pandas reference for one `profeed analyze` job (benchmark baseline).

Does, with pandas, what the seed projects do with an Nsight Compute CSV
(Meta KernelAgent's load_ncu_metrics / ncu_roofline, Intel KernelFoundry's
NCUProfilerFeedback), generalised to both ncu CSV pages:

  1. read every given CSV with pandas, keeping only lines that start with '"'
     (drops ==PROF== / ==WARNING== lines and the application's stdout);
  2. raw page (one row per launch): drop the units row, strip thousands
     separators from every metric column and convert it with pd.to_numeric,
     then scale auto-scaled units (us/ms -> ns, Ghz -> hz, Kbyte..Tbyte -> byte,
     Tbyte/s -> byte/s, sector/us -> sector/s, ...) using the units row;
     details page (long format, 16-field metric rows and 20-field rule rows):
     the same for "Metric Value" using "Metric Unit";
  3. pick kernels: group launches by kernel name, sum the duration, sort;
  4. classify speed of light per launch and per kernel from SM throughput vs
     memory throughput with NCU's SOLBottleneck thresholds (>= 80 high,
     both < 60 latency (or small grid when waves < 1), >= 10-point gap
     memory-/compute-bound, else balanced);
  5. read the details page's rules (Rule Name/Type/Description/Estimated
     Speedup) for the picked kernels, strip the "See ... (url) for more ..."
     sentences as KernelFoundry does;
  6. print a feedback text for the top kernels and a one-line summary.

Every row and every metric column is parsed and converted; nothing is skipped.
Run with Debian's interpreter: /usr/bin/python3 (python3-pandas).

Usage: ncu_pandas.py [--top N] [--quiet] FILE [FILE...]
"""

import argparse
import io
import math
import os
import re
import sys

import numpy as np
import pandas as pd

ID_COLS = ["ID", "Process ID", "Process Name", "Host Name", "Kernel Name",
           "Context", "Stream", "Block Size", "Grid Size", "Device", "CC"]

# Raw-page metric names (canonical) and details-page labels for the same things.
DUR = "gpu__time_duration.sum"
SM_SOL = "sm__throughput.avg.pct_of_peak_sustained_elapsed"
MEM_SOL = "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed"
WAVES = "launch__waves_per_multiprocessor"
SOL_SECTION = "GPU Speed Of Light Throughput"
# KernelFoundry's "Throughput Metrics" lines: label -> raw-page metric.
THROUGHPUT = [
    ("Compute (SM) Throughput", SM_SOL),
    ("Memory Throughput", MEM_SOL),
    ("L1/TEX Cache Throughput", "l1tex__throughput.avg.pct_of_peak_sustained_active"),
    ("L2 Cache Throughput", "lts__throughput.avg.pct_of_peak_sustained_elapsed"),
    ("DRAM Throughput", "gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed"),
]
LABEL_TO_METRIC = dict(THROUGHPUT)
LABEL_TO_METRIC["Duration"] = DUR
LABEL_TO_METRIC["Waves Per SM"] = WAVES

SEE_ALSO = re.compile(r"\s*See [^()]*\(https?://[^)]*\) for more [^.]*\.")

# --- units ---------------------------------------------------------------

_PREFIX = {"": 1.0, "K": 1e3, "k": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "P": 1e15}
_TIME_NS = {"ns": 1.0, "nsecond": 1.0, "us": 1e3, "usecond": 1e3,
            "ms": 1e6, "msecond": 1e6, "s": 1e9, "second": 1e9}
_unit_cache = {}


def _term(term, numerator):
    """Factor that turns one unit term into its base, and the base name."""
    if term in _TIME_NS:
        # durations go to ns (ncu's base), rates "per time" go to per second
        return (_TIME_NS[term], "ns") if numerator else (_TIME_NS[term] / 1e9, "s")
    for base in ("byte", "hz", "Hz"):
        if term.endswith(base) and term[: -len(base)] in _PREFIX:
            return _PREFIX[term[: -len(base)]], base.lower()
    return 1.0, term


def unit_factor(unit):
    """(factor, base unit) for an ncu unit string such as 'Tbyte/s' or '%/Kbyte'."""
    if not isinstance(unit, str) or unit == "":
        return 1.0, ""
    hit = _unit_cache.get(unit)
    if hit is None:
        parts = unit.split("/")
        factor, base = _term(parts[0], True)
        for den in parts[1:]:
            f, b = _term(den, False)
            factor /= f
            base += "/" + b
        hit = _unit_cache[unit] = (factor, base)
    return hit


def to_number(series):
    """Strip thousands separators and coerce to float (NaN on text)."""
    if series.dtype != object:
        return pd.to_numeric(series, errors="coerce")
    return pd.to_numeric(series.str.replace(",", "", regex=False), errors="coerce")


# --- reading ---------------------------------------------------------------


def read_ncu_csv(path):
    # Keep only CSV rows (they start with a quote); filtering bytes and handing
    # pandas a BytesIO avoids a decoded (UCS-4) copy of the whole file.
    with open(path, "rb") as f:
        kept = [line for line in f if line.startswith(b'"')]
    nbytes = os.path.getsize(path)
    if not kept:
        return pd.DataFrame(), nbytes
    return pd.read_csv(io.BytesIO(b"".join(kept)), encoding="utf-8",
                       encoding_errors="replace", low_memory=False), nbytes


def load_raw(df):
    """Raw page -> (launch frame with numeric base-unit metrics, text columns)."""
    is_units = df["ID"].isna()
    units = df.loc[is_units].iloc[0] if is_units.any() else pd.Series(dtype=object)
    data = df.loc[~is_units].reset_index(drop=True)
    metric_cols = [c for c in data.columns if c not in ID_COLS]
    raw = data[metric_cols]
    num = raw.apply(to_number)  # every metric column, every row
    # columns that are text (device name, cache config, ...): keep them as text
    text_cols = [c for c in metric_cols
                 if num[c].isna().all() and raw[c].notna().any()]
    factors = pd.Series([unit_factor(units.get(c))[0] for c in metric_cols],
                        index=metric_cols, dtype=float)
    num = num.mul(factors, axis=1)  # auto-scaled units -> base units
    ids = data[ID_COLS].copy()
    ids["ID"] = pd.to_numeric(ids["ID"], errors="coerce").astype("int64")
    frame = pd.concat([ids, num.drop(columns=text_cols)], axis=1)
    return frame, data[text_cols]


def load_details(df):
    """Details page -> (metric rows with numeric base-unit values, rule rows)."""
    ids = pd.to_numeric(df["ID"], errors="coerce")
    df = df.loc[ids.notna()].copy()   # rows of embedded foreign tables have no ID
    df["ID"] = ids[ids.notna()].astype("int64")
    is_rule = df["Rule Name"].notna() if "Rule Name" in df.columns else \
        pd.Series(False, index=df.index)
    metrics = df.loc[~is_rule, ID_COLS + ["Section Name", "Metric Name",
                                           "Metric Unit", "Metric Value"]].copy()
    value = to_number(metrics["Metric Value"].astype(str))
    conv = metrics["Metric Unit"].map(lambda u: unit_factor(u))
    metrics["Value"] = value * conv.map(lambda t: t[0]).astype(float)
    metrics["Base Unit"] = conv.map(lambda t: t[1])
    rule_cols = ["Rule Name", "Rule Type", "Rule Description",
                 "Estimated Speedup Type", "Estimated Speedup"]
    rules = df.loc[is_rule, ["ID", "Kernel Name", "Section Name"] +
                   [c for c in rule_cols if c in df.columns]].copy()
    if len(rules):
        rules["Rule Description"] = rules["Rule Description"].astype(str) \
            .str.replace(SEE_ALSO, "", regex=True).str.strip()
        rules["Speedup"] = to_number(rules["Estimated Speedup"].astype(str)) \
            if "Estimated Speedup" in rules else np.nan
    return metrics, rules


def launches_from_details(metrics):
    """Per-launch frame (like the raw page) from the details metric rows."""
    sel = metrics[metrics["Section Name"].isin([SOL_SECTION, "Launch Statistics"]) &
                  metrics["Metric Name"].isin(LABEL_TO_METRIC.keys())]
    # KernelFoundry: first "duration" row per ID
    wide = sel.pivot_table(index="ID", columns="Metric Name", values="Value",
                           aggfunc="first").rename(columns=LABEL_TO_METRIC)
    names = metrics.groupby("ID")["Kernel Name"].first()
    frame = wide.join(names, how="right").reset_index()
    return frame


# --- analysis --------------------------------------------------------------


def classify(sm, mem, waves):
    sm = np.asarray(sm, dtype=float)
    mem = np.asarray(mem, dtype=float)
    waves = np.asarray(waves, dtype=float)
    low = (sm < 60) & (mem < 60)
    conds = [np.isnan(sm) | np.isnan(mem),
             (sm >= 80) | (mem >= 80),
             low & (waves < 1),
             low,
             (mem - sm) >= 10,
             (sm - mem) >= 10]
    labels = ["unknown", "high-throughput", "small-grid", "latency-bound",
              "memory-bound", "compute-bound"]
    return np.select(conds, labels, default="balanced")


def fmt_ns(ns):
    if not isinstance(ns, float) or math.isnan(ns):
        return "n/a"
    for unit, f in (("s", 1e9), ("ms", 1e6), ("us", 1e3)):
        if ns >= f:
            return f"{ns / f:.3g} {unit}"
    return f"{ns:.3g} ns"


def analyze(paths, top):
    launches, rules, metrics = [], [], []
    nbytes = nrows = 0
    for p in paths:
        df, size = read_ncu_csv(p)
        nbytes += size
        nrows += len(df)
        if df.empty:
            continue
        if "Metric Name" in df.columns:
            m, r = load_details(df)
            metrics.append(m)
            rules.append(r)
        else:
            frame, _text = load_raw(df)
            launches.append(frame)
    metrics = pd.concat(metrics, ignore_index=True) if metrics else None
    rules = pd.concat(rules, ignore_index=True) if rules else None
    if launches:
        frame = pd.concat(launches, ignore_index=True)
    elif metrics is not None:
        frame = launches_from_details(metrics)
    else:
        return "No NCU profile data available.\n", nbytes, nrows, 0
    missing = [c for c in (DUR, SM_SOL, MEM_SOL, WAVES) if c not in frame.columns]
    if missing:
        frame = frame.assign(**{c: np.nan for c in missing})

    frame = frame.assign(SOL=classify(frame[SM_SOL], frame[MEM_SOL], frame[WAVES]))
    total = frame[DUR].sum()
    kern = frame.groupby("Kernel Name", sort=False).agg(
        launches=("ID", "size"), total_ns=(DUR, "sum"), mean_ns=(DUR, "mean"),
        sm=(SM_SOL, "mean"), mem=(MEM_SOL, "mean"), waves=(WAVES, "mean"))
    kern["SOL"] = classify(kern["sm"], kern["mem"], kern["waves"])
    kern = kern.sort_values("total_ns", ascending=False, kind="mergesort")
    slowest_launch = frame.loc[frame.groupby("Kernel Name")[DUR].idxmax().dropna(),
                               ["Kernel Name", "ID"]].set_index("Kernel Name")["ID"]
    picked = kern.head(top)

    out = []
    out.append(f"Profiled {len(frame)} launches of {len(kern)} kernels, "
               f"total GPU time {fmt_ns(float(total))}.")
    for rank, (name, k) in enumerate(picked.iterrows(), 1):
        share = 100.0 * k.total_ns / total if total else float("nan")
        out.append("")
        out.append(f"#{rank} {name}: {int(k.launches)} launch(es), "
                   f"{fmt_ns(float(k.total_ns))} ({share:.1f}% of GPU time)")
        out.append(f"  Speed of light: SM {k.sm:.1f}%, memory {k.mem:.1f}% -> {k.SOL}")
        rows = frame[frame["Kernel Name"] == name]
        out.append("  Throughput Metrics:")
        for label, metric in THROUGHPUT:
            if metric in rows.columns and rows[metric].notna().any():
                out.append(f"    - {label}: {rows[metric].mean():.1f}%")
        lid = slowest_launch.get(name)
        if rules is not None and lid is not None:
            rr = rules[(rules["ID"] == lid) & (rules["Rule Type"] != "INF")]
            rr = rr.sort_values("Speedup", ascending=False, na_position="last",
                                kind="mergesort")
            if len(rr):
                out.append(f"  Rules (slowest launch, ID {lid}):")
            for _, r in rr.iterrows():
                sp = "" if pd.isna(r.Speedup) else \
                    f" (est. {r['Estimated Speedup Type']} speedup {r.Speedup:.1f}%)"
                out.append(f"    - [{r['Rule Type']}] {r['Rule Name']}{sp}: "
                           f"{r['Rule Description']}")
    slow = kern.index[0] if len(kern) else "n/a"
    summary = (f"ncu_pandas: files={len(paths)} bytes={nbytes} rows={nrows} "
               f"launches={len(frame)} kernels={len(kern)} "
               f"slowest={slow.split('(')[0]} {fmt_ns(float(kern.total_ns.iloc[0]))} "
               f"[{kern.SOL.iloc[0]}]"
               f" rules={0 if rules is None else len(rules)}")
    return "\n".join(out) + "\n", nbytes, nrows, summary


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--top", type=int, default=3, help="kernels to describe (3)")
    ap.add_argument("--quiet", action="store_true",
                    help="print only the one-line summary")
    ap.add_argument("files", nargs="+")
    args = ap.parse_args(argv)
    text, _nbytes, _nrows, summary = analyze(args.files, args.top)
    if not args.quiet:
        sys.stdout.write(text)
        sys.stdout.write("\n")
    print(summary)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
