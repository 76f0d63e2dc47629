#!/usr/bin/env python3
"""bench/accuracy.py PROFEED [--markdown]: how often profeed's first finding per kernel is right.

For every corpus with a truth.txt under tests/fixtures/ncu/ and every pass plan captured for it,
runs `PROFEED analyze --format json --min-share 0` on the plan's files and compares each kernel's
first finding with the expected one:

  right       the expected category (and, for compute_bound:PIPE, that pipe named in the title);
  says less   a finding that is consistent with the truth but less specific, e.g. dram_bound for an
              uncoalesced kernel whose capture has no sector counters, or compute-bound with "pipe
              not measured" (allowed for the sol and three-section plans);
  wrong       anything else.

Prints one line per corpus and plan (right / kernels, says less, wrong) and the misses; with
--markdown, the table for docs/ncu.md. Exit status 0 always: this measures, it does not gate
(tests/test_ncu_accuracy.c does, on the same files).
"""
import csv
import io
import json
import lzma
import os
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FIXTURES = os.path.join(ROOT, "tests", "fixtures", "ncu")

# Plan -> files, for each capture folder laid out by deploy/gpu-corpus.sh.
PLANS = [
    # the default since 2026-12-02: metrics + MemoryWorkloadAnalysis, read without the SM
    # summary that left the plan later that day (as_the_plan_collects)
    ("core", ["core_mwa_raw.csv"]),
    ("core metrics only", ["core_raw.csv"]),  # the default until 2026-12-01
    ("sol", ["sol_raw.csv"]),
    ("three sections", ["pass1_sol.csv", "pass2_memory.csv", "pass3_warps.csv"]),
    ("full", ["full_raw.csv", "full_details.csv"]),
    # what agents capture themselves: KernelFoundry's `ncu --set detailed --csv` (the details
    # page) and KernelAgent's `--csv --page raw --metrics <29 names>` (agents-2026-12-04/)
    ("detailed (KernelFoundry)", ["detailed.csv"]),
    ("KernelAgent's 29 metrics", ["ka_raw.csv"]),
]
# (corpus, capture folder, fileset name in truth.txt)
CAPTURES = [
    ("h200 (kernels.cu)", "h200/capture-2026-12-01", "h200", "kernels"),
    ("h200-v2 (corpus_v2.cu)", "h200-v2/capture-2026-12-01", "h200-v2", "kernels"),
    # captured again under the plan without the SM summary (eleventh session)
    ("h200 (kernels.cu) 12-02", "h200/capture-2026-12-02", "h200", "kernels"),
    ("h200-v2 (corpus_v2.cu) 12-02", "h200-v2/capture-2026-12-02", "h200-v2", "kernels"),
    ("h200 (kernels.cu) 12-04", "h200/capture-2026-12-04", "h200", "kernels"),
    ("h200-v2 (corpus_v2.cu) 12-04", "h200-v2/capture-2026-12-04", "h200-v2", "kernels"),
    ("h200 (kernels.cu) 12-04b", "h200/capture-2026-12-04b", "h200", "kernels"),
    ("h200-v2 (corpus_v2.cu) 12-04b", "h200-v2/capture-2026-12-04b", "h200-v2", "kernels"),
    ("h200-v3 (corpus_v3.cu)", "h200-v3/kernels", "h200-v3", "kernels"),
    ("h200-v3 workloads", "h200-v3/workloads", "h200-v3", "workloads"),
    ("h200-v4 (corpus_v4.cu)", "h200-v4/capture-2026-12-01", "h200-v4", "kernels"),
    ("h200-v5 (corpus_v5.cu)", "h200-v5/capture-2026-12-01", "h200-v5", "kernels"),
    ("h200-v6 (corpus_v6.cu)", "h200-v6/capture-2026-12-01", "h200-v6", "kernels"),
    ("h200-v7 (corpus_v7.cu)", "h200-v7/capture-2026-12-02", "h200-v7", "kernels"),
    ("h200-v8 (corpus_v8.cu)", "h200-v8/capture-2026-12-02", "h200-v8", "kernels"),
    ("h200-v9 (corpus_v9.cu)", "h200-v9/capture-2026-12-02", "h200-v9", "kernels"),
    ("h200-v10 (corpus_v10.cu)", "h200-v10/capture-2026-12-02", "h200-v10", "kernels"),
    ("h200-v11 (corpus_v11.cu)", "h200-v11/capture-2026-12-02", "h200-v11", "kernels"),
    ("h200-v13 (corpus_v13.cu)", "h200-v13/capture-2026-12-02", "h200-v13", "kernels"),
    ("h200-v14 (corpus_v14.cu)", "h200-v14/capture-2026-12-02", "h200-v14", "kernels"),
    ("h200-v15 (corpus_v15.cu)", "h200-v15/capture-2026-12-02", "h200-v15", "kernels"),
    ("h200-v16 (corpus_v16.cu)", "h200-v16/capture-2026-12-02", "h200-v16", "kernels"),
    ("h200-v17 (corpus_v17.cu)", "h200-v17/capture-2026-12-02", "h200-v17", "kernels"),
    ("h200-v18 (corpus_v18.cu)", "h200-v18/capture-2026-12-02", "h200-v18", "kernels"),
    ("h200-v20 (corpus_v20.cu)", "h200-v20/capture-2026-12-02", "h200-v20", "kernels"),
    ("h200-v21 (corpus_v21.cu)", "h200-v21/capture-2026-12-02", "h200-v21", "kernels"),
    ("h200-v22 (corpus_v22.cu)", "h200-v22/capture-2026-12-02", "h200-v22", "kernels"),
    # captured on an H100 80GB HBM3 (the call for an H200 got an H100)
    ("h200-v22 (corpus_v22.cu) on H100", "h200-v22/capture-h100-2026-12-02", "h200-v22", "h100"),
    ("h200-v23 (corpus_v23.cu) on H100", "h200-v23/capture-h100-2026-12-02", "h200-v23", "kernels"),
    ("h200-v24 (corpus_v24.py, Triton) on H100", "h200-v24/capture-h100-2026-12-02", "h200-v24", "kernels"),
    ("h200-v23 (corpus_v23.cu)", "h200-v23/capture-2026-12-02", "h200-v23", "h200"),
    ("h200-v24 (corpus_v24.py, Triton)", "h200-v24/capture-2026-12-02", "h200-v24", "h200"),
    ("h200-v25 (corpus_v25.cu)", "h200-v25/capture-2026-12-02", "h200-v25", "kernels"),
    ("h200-v25 (corpus_v25.cu) on H100", "h200-v25/capture-h100-2026-12-02", "h200-v25", "h100"),
    ("h200-v26 (corpus_v26.cu) on H100", "h200-v26/capture-h100-2026-12-02", "h200-v26", "kernels"),
    ("h200-v29 (corpus_v29.cu)", "h200-v29/capture-2026-12-02", "h200-v29", "kernels"),
    ("h200-v30 (corpus_v30.cu)", "h200-v30/capture-2026-12-02", "h200-v30", "kernels"),
    ("h200-v31 (corpus_v31.cu)", "h200-v31/capture-2026-12-02", "h200-v31", "kernels"),
    ("h200-v33 (corpus_v33.cu)", "h200-v33/capture-2026-12-02", "h200-v33", "kernels"),
    ("h200-v34 (corpus_v34.cu)", "h200-v34/capture-2026-12-02", "h200-v34", "kernels"),
    ("h200-v35 (corpus_v35.cu)", "h200-v35/capture-2026-12-02", "h200-v35", "kernels"),
    ("h200-v36 (corpus_v36.cu)", "h200-v36/capture-2026-12-03", "h200-v36", "kernels"),
    ("h200-v38 (corpus_v38.cu)", "h200-v38/capture-2026-12-03", "h200-v38", "kernels"),
    ("h200-v39 (corpus_v39.cu)", "h200-v39/capture-2026-12-03", "h200-v39", "kernels"),
    ("h200-v40 (corpus_v40.cu)", "h200-v40/capture-2026-12-03", "h200-v40", "kernels"),
    ("h200-v41 (corpus_v41.cu)", "h200-v41/capture-2026-12-03", "h200-v41", "kernels"),
    ("h200-v42 (corpus_v42.cu)", "h200-v42/capture-2026-12-03", "h200-v42", "kernels"),
    ("h200-v43 (corpus_v43.cu)", "h200-v43/capture-2026-12-03", "h200-v43", "kernels"),
    ("h200-v44 (corpus_v44.cu)", "h200-v44/capture-2026-12-03", "h200-v44", "kernels"),
    ("h200-v45 (corpus_v45.cu)", "h200-v45/capture-2026-12-03", "h200-v45", "kernels"),
    ("h200-v46 (corpus_v46.cu)", "h200-v46/capture-2026-12-03", "h200-v46", "kernels"),
    ("h200-v48 (corpus_v48.cu)", "h200-v48/capture-2026-12-03", "h200-v48", "kernels"),
    ("h200-v49 (corpus_v49.py)", "h200-v49/capture-2026-12-03", "h200-v49", "kernels"),
    ("h200-v50 (corpus_v50.cu)", "h200-v50/capture-2026-12-03", "h200-v50", "kernels"),
    ("h200-v52 (corpus_v52.cu)", "h200-v52/capture-2026-12-03", "h200-v52", "kernels"),
    ("h200-v53 (corpus_v53.cu)", "h200-v53/capture-2026-12-03", "h200-v53", "kernels"),
    ("h200-v12 workloads", "h200-v12/workloads", "h200-v12", "workloads"),
    ("h200-v19 workloads", "h200-v19/workloads", "h200-v19", "workloads"),
    ("h200-v19 layer-norm backward", "h200-v19/layer_norm_backward", "h200-v19", "lnb"),
    ("h200-v22 workloads", "h200-v22/workloads", "h200-v22", "workloads"),
    ("h200-v27 workloads", "h200-v27/workloads", "h200-v27", "workloads"),
    ("h200-v28 workloads", "h200-v28/workloads", "h200-v28", "workloads"),
    ("h200-v27 workloads on H100", "h200-v27/workloads-h100", "h200-v27", "h100"),
    ("h200-v28 workloads on H100", "h200-v28/workloads-h100", "h200-v28", "h100"),
    ("h200-v32 workloads", "h200-v32/workloads", "h200-v32", "workloads"),
    ("h200-v37 workloads", "h200-v37/workloads", "h200-v37", "workloads"),
    ("h200-v47 workloads", "h200-v47/workloads", "h200-v47", "workloads"),
    ("h200-v51 workloads", "h200-v51/workloads", "h200-v51", "workloads"),
    ("h200-v54 workloads", "h200-v54/workloads", "h200-v54", "workloads"),
    ("h200-v54 problem 21", "h200-v54/workloads-p21", "h200-v54", "p21"),
    ("h200-v55 (corpus_v55.cu)", "h200-v55/capture-2026-12-04", "h200-v55", "kernels"),
    ("h200-v56 (corpus_v56.py, Triton)", "h200-v56/capture-2026-12-04", "h200-v56", "kernels"),
    ("h200-v57 (corpus_v57.cu)", "h200-v57/capture-2026-12-04", "h200-v57", "kernels"),
    ("h200-v58 (corpus_v58.cu)", "h200-v58/capture-2026-12-04", "h200-v58", "kernels"),
    ("h200-v59 (corpus_v59.cu)", "h200-v59/capture-2026-12-04", "h200-v59", "kernels"),
    ("h200-v60 (corpus_v60.cu)", "h200-v60/capture-2026-12-04", "h200-v60", "kernels"),
    ("h200-v61 (corpus_v61.cu)", "h200-v61/capture-2026-12-04", "h200-v61", "kernels"),
    ("h200-v62 (corpus_v62.cu)", "h200-v62/capture-2026-12-04", "h200-v62", "kernels"),
    ("h200-v63 (corpus_v63.cu)", "h200-v63/capture-2026-12-04", "h200-v63", "kernels"),
    ("h200-v64 (corpus_v64.cu)", "h200-v64/capture-2026-12-04", "h200-v64", "kernels"),
    ("h200-v65 (corpus_v65.cu)", "h200-v65/capture-2026-12-04", "h200-v65", "kernels"),
    ("h200-v66 (corpus_v66.cu)", "h200-v66/capture-2026-12-05", "h200-v66", "kernels"),
    ("h200-v67 (corpus_v67.cu)", "h200-v67/capture-2026-12-05", "h200-v67", "kernels"),
    ("h200-v51 workloads 12-04", "h200-v51/workloads-2026-12-04", "h200-v51", "workloads"),
    # the agents' own captures (deploy/gpu-corpus.sh --plans "detailed ka")
    ("h200 (kernels.cu) agents", "h200/agents-2026-12-04", "h200", "kernels"),
    ("h200-v2 (corpus_v2.cu) agents", "h200-v2/agents-2026-12-04", "h200-v2", "kernels"),
    ("h200-v3 (corpus_v3.cu) agents", "h200-v3/agents-2026-12-04", "h200-v3", "kernels"),
    ("h200-v4 (corpus_v4.cu) agents", "h200-v4/agents-2026-12-04", "h200-v4", "kernels"),
    ("h200-v48 (corpus_v48.cu) agents", "h200-v48/agents-2026-12-04", "h200-v48", "kernels"),
    ("h200-v55 (corpus_v55.cu) agents", "h200-v55/agents-2026-12-04", "h200-v55", "kernels"),
    ("h200-v56 (corpus_v56.py) agents", "h200-v56/agents-2026-12-04", "h200-v56", "kernels"),
    ("h200-v57 (corpus_v57.cu) agents", "h200-v57/agents-2026-12-04", "h200-v57", "kernels"),
    ("h200-v58 (corpus_v58.cu) agents", "h200-v58/agents-2026-12-04", "h200-v58", "kernels"),
    ("h200-v59 (corpus_v59.cu) agents", "h200-v59/agents-2026-12-04", "h200-v59", "kernels"),
    ("h200-v60 (corpus_v60.cu) agents", "h200-v60/agents-2026-12-04", "h200-v60", "kernels"),
    ("h200-v61 (corpus_v61.cu) agents", "h200-v61/agents-2026-12-04", "h200-v61", "kernels"),
    ("h200-v62 (corpus_v62.cu) agents", "h200-v62/agents-2026-12-04", "h200-v62", "kernels"),
    ("h200-v63 (corpus_v63.cu) agents", "h200-v63/agents-2026-12-04", "h200-v63", "kernels"),
    ("h200-v64 (corpus_v64.cu) agents", "h200-v64/agents-2026-12-04", "h200-v64", "kernels"),
    ("h200-v65 (corpus_v65.cu) agents", "h200-v65/agents-2026-12-04", "h200-v65", "kernels"),
    ("h200-v66 (corpus_v66.cu) agents", "h200-v66/agents-2026-12-05", "h200-v66", "kernels"),
]
# Corpus v2 as shared (2026-11), under the plans of that day (its core_raw.csv is the default
# plan of that time).
OLD_V2_PLANS = [
    ("2026-11 default plan (26 metrics)", ["core_raw.csv"]),
    ("16-metric raw page", ["raw16.csv"]),
    ("sol", ["sol_raw.csv"]),
    ("three sections", ["pass1_sol.csv", "pass2_memory.csv", "pass3_warps.csv"]),
    ("full", ["full_raw.csv", "full_details.csv"]),
]
# The first captures of kernels.cu (2026-11), under the plans of their day.
OLD_PLANS = [
    ("h200 2026-11: 24-metric raw page", ["h200/raw_metrics.csv"]),
    ("h200 2026-11: details sections", ["h200/details_sections.csv"]),
    ("h200 2026-11: three sections", ["h200/pass1_sol.csv", "h200/pass2_memory.csv",
                                      "h200/pass3_warps_occupancy.csv"]),
    ("h200 2026-11: full", ["h200/full_raw.csv", "h200/full_details.csv"]),
]

PIPE_WORDS = {"fma": "FP32 FMA pipe", "alu": "ALU pipe", "fp64": "FP64 pipe", "xu": "XU pipe",
              "tensor": "tensor pipe", "lsu": "LSU pipe", "adu": "ADU pipe", "cbu": "CBU pipe",
              "uniform": "uniform datapath", "tex": "TEX pipe"}

# What a capture without the specific counters may say instead, and still be right about the
# kernel: the bound the cause shows up on.
LESS = {
    "uncoalesced_access": {"dram_bound", "l2_bound", "l1_bound", "memory_bound", "latency_bound"},
    "bank_conflicts": {"l1_bound", "memory_bound"},
    "local_memory": {"l2_bound", "l1_bound", "dram_bound", "memory_bound", "register_spill"},
    "register_spill": {"local_memory", "l2_bound", "l1_bound", "dram_bound", "memory_bound"},
    "divergence": {"compute_bound", "latency_bound"},
    "barrier_stall": {"compute_bound", "latency_bound"},
    "small_grid": {"latency_bound"},
    "tail_effect": {"compute_bound", "latency_bound", "load_imbalance"},
    "occupancy": {"latency_bound", "dram_bound", "memory_bound"},
    "contention": {"latency_bound", "l1_bound", "memory_bound"},
    # A DRAM stream below its roof for want of bytes in flight is, without stall reasons
    # (SpeedOfLight alone), a kernel with no unit at 60%: latency.
    "dram_bound": {"memory_bound", "latency_bound"},
    "l2_bound": {"memory_bound"},
    "l1_bound": {"memory_bound"},
    "compute_bound": set(),
    "latency_bound": set(),
}
# The LSU pipe issues into L1/TEX: a capture without traffic counters sees its work as L1's.
LESS_PIPE = {"lsu": {"l1_bound"}}
# A category with a pipe named in the title: serialized constant loads keep the ADU busy, and
# without issue slots (SpeedOfLight alone) the replays cannot be told from the ADU's own work.
LESS_WITH_PIPE = {"warp_stall": {("compute_bound", "adu")}}


def read_truth(corpus):
    truth = []
    with open(os.path.join(FIXTURES, corpus, "truth.txt")) as f:
        for line in f:
            line = line.strip()
            if line and not line.startswith("#"):
                fileset, kernel, expect = line.split()
                truth.append((fileset, kernel, expect))
    return truth


def launch_keys(path):
    """Launch ID -> (kernel name, block, grid), from a capture's raw page."""
    with open(path, newline="", errors="replace") as f:
        rows = list(csv.reader(l for l in f if l.startswith('"')))
    header = rows[0]
    ix = {h: i for i, h in enumerate(header)}
    keys = {}
    for row in rows[1:]:
        if len(row) == len(header) and row[ix["ID"]].isdigit():
            keys[int(row[ix["ID"]])] = (row[ix["Kernel Name"]], row[ix["Block Size"]],
                                        row[ix["Grid Size"]])
    return keys


def judge(finding, expect):
    """The best verdict over the alternatives of "a|b" (levers within 5% of each other)."""
    verdicts = [judge_one(finding, one) for one in expect.split("|")]
    return min(verdicts, key=["right", "less", "wrong"].index)


def judge_one(finding, expect):
    category, _, pipe = expect.partition(":")
    got = finding["category"] if finding else "(none)"
    title = finding["title"] if finding else ""
    if got == category:
        if not pipe:
            return "right"
        if "was not measured" in title:  # names no bound, whatever pipe it mentions
            return "less"
        if PIPE_WORDS[pipe] in title:
            return "right"
        return "wrong"
    if got in LESS.get(category, set()) or got in LESS_PIPE.get(pipe, set()):
        return "less"
    for less_category, less_pipe in LESS_WITH_PIPE.get(category, set()):
        if got == less_category and PIPE_WORDS[less_pipe] in title:
            return "less"
    return "wrong"


def as_the_plan_collects(path, tmp):
    """A default-plan capture as the plan collects today: without ncu's SM summary
    (sm__throughput), which left the plan on 2026-12-02 (profeed rebuilds it from the pipes,
    analyzer/ncu/ncu_summary.c). Older captures hold it; their copy in tmp drops its columns."""
    with open(path, newline="", errors="replace") as f:
        lines = f.read().split("\n")
    drop = None
    out = []
    for line in lines:
        if line.startswith('"'):
            row = next(csv.reader([line]))
            if row[0] == "ID":
                drop = {i for i, name in enumerate(row) if name.startswith("sm__throughput.")}
                if not drop:
                    return path
            if drop is not None:
                buf = io.StringIO()
                csv.writer(buf, quoting=csv.QUOTE_ALL, lineterminator="").writerow(
                    [x for i, x in enumerate(row) if i not in drop])
                line = buf.getvalue()
        out.append(line)
    copy = os.path.join(tmp, path.replace(os.sep, "_"))
    with open(copy, "w", newline="") as f:
        f.write("\n".join(out))
    return copy


def run(profeed, files):
    out = subprocess.run([profeed, "analyze", "--format", "json", "--min-share", "0"] + files,
                         capture_output=True, text=True)
    if out.returncode not in (0, 3):
        raise RuntimeError(f"profeed analyze {' '.join(files)}: exit {out.returncode}: {out.stderr}")
    return json.loads(out.stdout)


def first_findings(feedback):
    """(name, block, grid) -> first finding of that kernel."""
    firsts = {}
    for k in feedback["kernels"]:
        firsts[(k["name"], k["block"], k["grid"])] = k["findings"][0] if k["findings"] else None
    return firsts


def in_ids(ids, launch_id):
    """Whether a kernel's launch_ids ("2-4,31", possibly ending in "...") holds launch_id."""
    for part in ids.split(","):
        part = part.strip(".")
        if not part:
            continue
        lo, _, hi = part.partition("-")
        if int(lo) <= launch_id <= int(hi or lo):
            return True
    return False


def kernel_for_id(feedback, keys, launch_id):
    """The feedback kernel that holds ncu launch launch_id: the kernel of its name, block and
    grid, or, where profeed analyzed that name's launches apart (they behave differently), the
    one whose launch_ids list it."""
    key = keys.get(launch_id)
    same = [k for k in feedback["kernels"] if key and (k["name"], k["block"], k["grid"]) == key]
    if len(same) > 1:
        same = [k for k in same if k.get("launch_ids") and in_ids(k["launch_ids"], launch_id)]
    return same[0] if same else None


def find(firsts, fileset_key):
    name = fileset_key
    for (kname, block, grid), f in firsts.items():
        if kname.split("(")[0] == name:
            return f, kname
    return None, None


def unpacked(path, tmp):
    """A fixture kept as NAME.xz (tests/CMakeLists.txt) is read from its unpacked copy in tmp."""
    if os.path.exists(path) or not os.path.exists(path + ".xz"):
        return path
    copy = os.path.join(tmp, "unpacked-" + os.path.basename(path))
    with lzma.open(path + ".xz") as src, open(copy, "wb") as dst:
        shutil.copyfileobj(src, dst)
    return copy


def capture_pages(folder, files, tmp):
    """The plan's pages of a capture folder as profeed reads them (unpacked, the default plan's
    as it collects today), copies in tmp where needed; None where the capture lacks a page."""
    paths = [os.path.join(FIXTURES, folder, f) for f in files]
    if not all(os.path.exists(p) or os.path.exists(p + ".xz") for p in paths):
        return None
    return [as_the_plan_collects(p, tmp) if p.endswith("core_mwa_raw.csv") else unpacked(p, tmp)
            for p in paths]


def truth_kernels(feedback, keys, truth, fileset):
    """(kernel as truth.txt names it, its expectation, the feedback's kernel or None) for each
    truth line of the fileset."""
    for fs, kernel, expect in truth:
        if fs != fileset:
            continue
        if kernel.startswith("#"):
            k = kernel_for_id(feedback, keys, int(kernel[1:]))
        else:
            k = next((k for k in feedback["kernels"] if k["name"].split("(")[0] == kernel), None)
        yield kernel, expect, k


def truth_firsts(feedback, keys, truth, fileset):
    """(kernel as truth.txt names it, its expectation, its first finding or None) for each truth
    line of the fileset."""
    for kernel, expect, k in truth_kernels(feedback, keys, truth, fileset):
        yield kernel, expect, k["findings"][0] if k and k["findings"] else None


def evaluate(profeed, folder, files, truth, fileset):
    with tempfile.TemporaryDirectory() as tmp:
        pages = capture_pages(folder, files, tmp)
        if pages is None:
            return None
        feedback = run(profeed, pages)
        keys = launch_keys(pages[0])
    result = {"right": 0, "less": 0, "wrong": 0, "misses": []}
    for kernel, expect, finding in truth_firsts(feedback, keys, truth, fileset):
        if kernel.startswith("#"):
            key = keys.get(int(kernel[1:]))
            label = f"{kernel} {key[0].split('(')[0][:50] if key else '?'}"
        else:
            label = kernel
        verdict = judge(finding, expect)
        result[verdict] += 1
        if verdict != "right":
            result["misses"].append((label, expect, verdict,
                                     f"{finding['category']}: {finding['title']}" if finding else "(none)"))
    return result


def main(argv):
    try:
        return s_main(argv)
    except BrokenPipeError:  # output piped into head
        return 0


def usage_status(args, doc, prog):
    """For a script whose first argument is profeed's path: 0 after printing the usage for
    --help, 2 after a message when the argument is missing or not an executable, None to go on."""
    if args and args[0] in ("-h", "--help"):
        print(doc)
        return 0
    if not args or args[0].startswith("-") or not os.access(args[0], os.X_OK):
        print(doc, file=sys.stderr)
        print(f"{prog}: the first argument is profeed's path, not {args[0]!r}" if args
              else f"{prog}: name profeed's path", file=sys.stderr)
        return 2
    return None


def s_main(argv):
    status = usage_status(argv[1:], __doc__, "accuracy")
    if status is not None:
        return status
    profeed, markdown = argv[1], "--markdown" in argv
    rows = []
    for corpus, folder, truth_dir, fileset in CAPTURES:
        truth = read_truth(truth_dir)
        for plan, files in PLANS:
            r = evaluate(profeed, folder, files, truth, fileset)
            if r:
                rows.append((corpus, plan, r))
    v2_truth = read_truth("h200-v2")
    for label, files in OLD_V2_PLANS:
        r = evaluate(profeed, "h200-v2", files, v2_truth, "kernels")
        if r:
            rows.append(("h200-v2 (2026-11 captures)", label, r))
    h200_truth = read_truth("h200")
    for label, files in OLD_PLANS:
        r = evaluate(profeed, ".", files, h200_truth, "kernels")
        if r:
            rows.append(("h200 (2026-11 captures)", label.split(": ")[1], r))
    if markdown:
        print("| corpus | plan | first finding right | says less (consistent) | wrong |")
        print("|---|---|---:|---:|---:|")
    for corpus, plan, r in rows:
        n = r["right"] + r["less"] + r["wrong"]
        if markdown:
            print(f"| {corpus} | {plan} | {r['right']} / {n} | {r['less']} | {r['wrong']} |")
        else:
            print(f"{corpus:28s} {plan:34s} right {r['right']:2d}/{n:2d}  says less {r['less']:2d}  wrong {r['wrong']:2d}")
    print()
    for corpus, plan, r in rows:
        for label, expect, verdict, got in r["misses"]:
            print(f"{verdict:5s} {corpus} / {plan}: {label}: expected {expect}, got {got[:150]}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
