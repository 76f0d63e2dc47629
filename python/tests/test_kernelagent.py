"""profeed.kernelagent.KernelProfiler: KernelAgent's profile_kernel, on the
farm (real broker, replay collector and analyzer processes) and on this host.

No GPU here: the farm's collector replays a recorded H200 capture, and the
host path is tested with ncu absent (KernelAgent's failure: None, logged) and
with a stand-in ncu that records its command line and writes a recorded
capture where --log-file says (what a real ncu measures is not tested)."""

import csv
import json
import logging
import os
import re
import stat
import sys
from pathlib import Path

import pytest

import profeed
from conftest import FIXTURES
from profeed.kernelagent import METRICS, KernelProfiler, read_ncu_csv
from profeed.kernelagent import __file__ as KERNELAGENT_FILE
from test_farm import FarmProcs

CAPTURE = FIXTURES / "ncu/h200/full_raw.csv"   # ncu --set full's raw page, 9 kernels, one launch each
KERNEL = "def kernel_function(a, b):\n    return a + b\n"
PROBLEM = FIXTURES / "wrapper/vector_add_problem.py"
# KernelAgent's ProfilerResults.to_dict(): these keys, in this order.
METADATA_KEYS = ["kernel_file", "problem_file", "round_num", "timestamp", "ncu_version"]
TIMESTAMP = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$")


def capture_rows(path):
    """The capture's launches as {column: cell}, read with the csv module."""
    lines = [line for line in open(path, errors="replace") if line.startswith('"')]
    header, _units, *rows = csv.reader(lines)
    return [dict(zip(header, row)) for row in rows]


def check_shape(doc, round_num):
    assert list(doc) == ["metrics", "metadata", "profeed"], list(doc)
    assert list(doc["metadata"]) == METADATA_KEYS
    assert doc["metadata"]["round_num"] == round_num
    assert TIMESTAMP.match(doc["metadata"]["timestamp"]), doc["metadata"]["timestamp"]
    assert isinstance(doc["metrics"], dict) and len(doc["metrics"]) == 1, doc["metrics"]
    (name, values), = doc["metrics"].items()
    assert set(values) <= set(METRICS)
    assert list(values) == [m for m in METRICS if m in values], "not in KernelAgent's order"
    return name, values


@pytest.fixture
def job_files(tmp_path):
    kernel = tmp_path / "ka_kernel.py"
    kernel.write_text(KERNEL)
    return kernel, PROBLEM


# -- on the farm ---------------------------------------------------------------

@pytest.fixture
def ka_farm(tmp_path):
    """A farm whose replay collector answers a kernel job for ka_kernel.py with
    the recorded capture (kernel jobs are matched by their kernel file's name)."""
    replay = tmp_path / "ka.map"
    replay.write_text(f"ka_kernel.py ncu.000 {CAPTURE}\n")
    f = FarmProcs(replay_map=str(replay))
    try:
        f.start_broker()
        f.start_workers()
        f.wait_workers()
        yield f
    finally:
        f.stop()


def test_farm_writes_kernelagents_json_with_the_captures_numbers(ka_farm, job_files, tmp_path):
    kernel, problem = job_files
    logs = tmp_path / "logs"
    with profeed.Farm(ka_farm.agents) as farm:
        profiler = KernelProfiler(logs, farm=farm, farm_options={"wait_s": 30})
        results = profiler.profile_kernel(kernel, problem, 7)
    assert results is not None, profiler.last_error
    saved = logs / "round007_ncu_metrics.json"
    doc = json.loads(saved.read_text())
    name, values = check_shape(doc, 7)
    assert doc["metadata"]["kernel_file"] == str(kernel) and doc["metadata"]["problem_file"] == str(problem)
    assert doc["metadata"]["ncu_version"] == "replay"  # the collector's WorkerInfo.profiler_version
    # KernelAgent's row: the capture's last launch, every one of the 29 the capture has, as printed.
    last = capture_rows(CAPTURE)[-1]
    assert name == last["Kernel Name"]
    assert list(values) == [m for m in METRICS if m in last] and len(values) == 18, values
    for metric, value in values.items():
        assert value == pytest.approx(round(float(last[metric]), 3)), metric
    assert values["dram__bytes_read.sum"] == 0.268  # in the capture's Gbyte, as KernelAgent reads it
    assert isinstance(values["launch__registers_per_thread"], int)
    assert doc["metrics"] == read_ncu_csv(CAPTURE.read_text())[0]
    assert results.notes == [], results.notes
    # profeed's feedback beside them, in the file and on the object.
    assert doc["profeed"]["source"] == "farm" and doc["profeed"]["job_id"] == results.job_id
    assert doc["profeed"]["feedback"] == results.feedback and "replayed" in results.feedback
    assert "collated" not in doc["profeed"]["document"]  # the raw page is not kept twice
    assert results.metrics == doc["metrics"] and results.to_dict() == doc


def test_farm_and_host_give_the_same_metrics_for_the_same_capture(ka_farm, job_files, tmp_path):
    """The farm path's JSON metrics are the host path's, byte for byte, for
    the capture the farm replays and the stand-in ncu writes here."""
    kernel, problem = job_files
    with profeed.Farm(ka_farm.agents) as farm:
        on_farm = KernelProfiler(tmp_path / "farm", farm=farm, farm_options={"wait_s": 30})
        farm_results = on_farm.profile_kernel(kernel, problem, 5)
    assert farm_results is not None, on_farm.last_error
    here = KernelProfiler(tmp_path / "host", ncu_bin_path=str(stand_in_ncu(tmp_path, CAPTURE)))
    host_results = here.profile_kernel(kernel, problem, 5)
    assert host_results is not None, here.last_error
    farm_doc = json.loads((tmp_path / "farm" / "round005_ncu_metrics.json").read_text())
    host_doc = json.loads((tmp_path / "host" / "round005_ncu_metrics.json").read_text())
    assert json.dumps(farm_doc["metrics"]) == json.dumps(host_doc["metrics"])  # values, types and order
    assert len(next(iter(farm_doc["metrics"].values()))) == 18


def test_farm_request_is_kernelagents_plan_and_window(job_files, tmp_path):
    """What profile_kernel asks of the farm: the kernel + problem job, a
    custom pass of KernelAgent's 29 metrics, its launch count, the round."""
    seen = {}

    class Recorder:
        def submit(self, **kwargs):
            seen.update(kwargs)
            raise profeed.Unavailable("no farm here")

    kernel, problem = job_files
    profiler = KernelProfiler(tmp_path, farm=Recorder())
    assert profiler.profile_kernel(kernel, problem, 4) is None
    assert "no farm here" in profiler.last_error
    assert not (tmp_path / "round004_ncu_metrics.json").exists()
    assert seen["kernel"] == kernel and seen["problem"] == problem and seen["round"] == 4
    (name, args), = seen["plan"]
    assert args == ["--kernel-name-base", "demangled", "--metrics", ",".join(METRICS)] and len(METRICS) == 29
    assert seen["launch_count"] == 20 and "launch_skip" not in seen  # the wrapper's NVTX range skips warm-ups
    assert seen["collated"] is True  # the raw page comes back (FeedbackShape.collated)


def test_farm_that_does_not_answer_returns_none(job_files, tmp_path, caplog):
    kernel, problem = job_files
    with profeed.Farm(f"ipc://{tmp_path}/nobody", connect_timeout_s=0.5) as farm:
        profiler = KernelProfiler(tmp_path / "logs", farm=farm)
        with caplog.at_level(logging.ERROR, logger="profeed.kernelagent"):
            assert profiler.profile_kernel(kernel, problem, 1) is None
    assert "no answer from the broker" in profiler.last_error
    assert "no answer from the broker" in caplog.text
    assert not (tmp_path / "logs").exists()


def test_custom_passes_are_checked(tmp_path):
    with profeed.Farm(f"ipc://{tmp_path}/nobody") as farm:
        with pytest.raises(profeed.BadInput, match="custom pass"):
            farm.submit(["x"], plan=[("p", "--metrics x")])
        with pytest.raises(profeed.BadInput, match="plan"):
            farm.submit(["x"], plan=[])


# -- on this host ------------------------------------------------------------

def test_host_without_ncu_returns_none_as_kernelagent(job_files, tmp_path, monkeypatch, caplog):
    if os.path.exists("/usr/local/cuda/bin/ncu"):
        pytest.skip("this host has ncu at KernelAgent's fallback path")
    empty = tmp_path / "bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    kernel, problem = job_files
    profiler = KernelProfiler(tmp_path / "logs")
    with caplog.at_level(logging.ERROR, logger="profeed.kernelagent"):
        assert profiler.profile_kernel(kernel, problem, 2) is None
    # KernelAgent: FileNotFoundError("NCU binary not found: ...") caught, logged, None, no retry.
    assert "File not found during profiling: NCU binary not found: /usr/local/cuda/bin/ncu" in caplog.text
    assert "attempt 2/2" not in caplog.text
    assert not list((tmp_path / "logs").glob("round*_ncu_metrics.json"))
    assert profiler.ncu_version is None
    named = KernelProfiler(tmp_path / "logs", ncu_bin_path=str(tmp_path / "no-ncu"))
    assert named.profile_kernel(kernel, problem, 2) is None
    assert f"NCU binary not found: {tmp_path / 'no-ncu'}" in named.last_error


def stand_in_ncu(tmp_path, capture=None, exit_status=0, message=""):
    """An executable that records its argv and, like ncu --log-file, writes
    the recorded capture there. It profiles nothing."""
    script = tmp_path / "ncu"
    script.write_text(f"""#!{sys.executable}
import json, shutil, sys
if sys.argv[1:] == ["--version"]:
    print("NVIDIA (R) Nsight Compute Command Line Profiler")
    print("Version 2025.3.1.0 (build 36398880) (public-release)")
    sys.exit(0)
with open({str(tmp_path / "argv.json")!r}, "a") as f:
    f.write(json.dumps(sys.argv) + "\\n")
log = next(a.split("=", 1)[1] for a in sys.argv if a.startswith("--log-file="))
if {str(capture) if capture else ""!r}:
    shutil.copyfile({str(capture) if capture else ""!r}, log)
if {message!r}:
    print({message!r}, file=sys.stderr)
sys.exit({exit_status})
""")
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    return script


def test_host_runs_kernelagents_ncu_command_and_saves_its_json(job_files, tmp_path):
    kernel, problem = job_files
    ncu = stand_in_ncu(tmp_path, CAPTURE)
    logs, artifacts = tmp_path / "logs", tmp_path / "artifacts"
    profiler = KernelProfiler(logs, artifacts_dir=artifacts, ncu_bin_path=str(ncu))
    results = profiler.profile_kernel(kernel, problem, 12)
    assert results is not None, profiler.last_error
    argv = json.loads((tmp_path / "argv.json").read_text())
    csv_path = artifacts.resolve() / "ncu_round_12.csv"
    assert argv[1:12] == ["--csv", "--page=raw", "--kernel-name-base=demangled", "--target-processes=all",
                          "--replay-mode=kernel", "--profile-from-start=on", f"--log-file={csv_path}",
                          f"--metrics={','.join(METRICS)}", "--launch-skip=3", "--launch-count=20",
                          sys.executable]
    assert argv[12:] == [str(artifacts.resolve() / "ncu_wrapper.py"), str(kernel.resolve()), str(problem.resolve())]
    doc = json.loads((logs / "round012_ncu_metrics.json").read_text())
    name, values = check_shape(doc, 12)
    assert doc["metadata"]["ncu_version"] == "2025.3.1.0"
    # KernelAgent keeps the last profiled launch, every one of its metrics the capture has.
    last = capture_rows(CAPTURE)[-1]
    assert name == last["Kernel Name"]
    assert list(values) == [m for m in METRICS if m in last] and len(values) == 18
    for metric, value in values.items():
        assert value == pytest.approx(round(float(last[metric]), 3)), metric
    assert isinstance(values["launch__registers_per_thread"], int)
    assert doc["metrics"] == read_ncu_csv(CAPTURE.read_text())[0]
    # profeed's feedback is profeed analyze's on the same CSV.
    collated, text = profeed.analysis.analyze_files([str(csv_path)], profiler="ncu")
    assert results.feedback == text and doc["profeed"]["feedback"] == text and text
    assert doc["profeed"]["source"] == "host" and doc["profeed"]["document"] == collated


def test_host_ncu_failure_is_retried_then_none(job_files, tmp_path, monkeypatch):
    kernel, problem = job_files
    slept = []
    ncu = stand_in_ncu(tmp_path, exit_status=1, message="==ERROR== The application returned an error code (1).")
    profiler = KernelProfiler(tmp_path / "logs", ncu_bin_path=str(ncu))
    monkeypatch.setattr(profiler, "_wait_with_backoff", lambda attempt: slept.append(2 ** attempt))
    assert profiler.profile_kernel(kernel, problem, 3) is None
    assert "NCU profiling failed with return code 1" in profiler.last_error
    assert len((tmp_path / "argv.json").read_text().splitlines()) == 2 and slept == [2]  # KernelAgent's 2 tries
    perm = stand_in_ncu(tmp_path, exit_status=1, message="==ERROR== ERR_NVGPUCTRPERM - no permission")
    profiler = KernelProfiler(tmp_path / "logs", ncu_bin_path=str(perm))
    assert profiler.profile_kernel(kernel, problem, 3, max_retries=1) is None
    assert "elevated permissions" in profiler.last_error
    assert not list((tmp_path / "logs").glob("round*_ncu_metrics.json"))


def test_host_ncu_that_profiled_nothing_returns_none(job_files, tmp_path):
    kernel, problem = job_files
    empty = tmp_path / "empty.csv"
    empty.write_text("==PROF== Connected to process 1\n==WARNING== No kernels were profiled.\n" + "=" * 60 + "\n")
    profiler = KernelProfiler(tmp_path / "logs", ncu_bin_path=str(stand_in_ncu(tmp_path, empty)))
    assert profiler.profile_kernel(kernel, problem, 3, max_retries=1) is None
    assert "No columns to parse" in profiler.last_error


# -- bad input ---------------------------------------------------------------

def test_missing_files_raise_file_missing(job_files, tmp_path):
    kernel, problem = job_files
    profiler = KernelProfiler(tmp_path)
    with pytest.raises(profeed.FileMissing, match="Kernel file not found: .*nope.py") as e:
        profiler.profile_kernel(tmp_path / "nope.py", problem, 1)
    assert isinstance(e.value, FileNotFoundError) and isinstance(e.value, profeed.BadInput)
    with pytest.raises(FileNotFoundError, match="Problem file not found: .*gone.py"):
        profiler.profile_kernel(kernel, tmp_path / "gone.py", 1)


@pytest.mark.parametrize("round_num", ["3", -1, True, 2.0, None, 2 ** 32])
def test_bad_round_raises_bad_input(job_files, tmp_path, round_num):
    kernel, problem = job_files
    with pytest.raises(profeed.BadInput, match="round_num"):
        KernelProfiler(tmp_path).profile_kernel(kernel, problem, round_num)
    assert not list(tmp_path.glob("round*"))


def test_bad_constructor_arguments(tmp_path):
    with pytest.raises(profeed.BadInput, match="farm"):
        KernelProfiler(tmp_path, farm="tcp://127.0.0.1:5555")
    with pytest.raises(profeed.BadInput, match="launch_count"):
        KernelProfiler(tmp_path, launch_count=-1)


# -- KernelAgent's reading of the CSV, checked against pandas -------------------

def kernelagent_with_pandas(path):
    """KernelAgent's load_ncu_metrics(select="last") + metrics_to_prompt,
    restated with pandas (meta-pytorch/KernelAgent a3001c7)."""
    import math

    import numpy as np
    import pandas as pd
    df = pd.read_csv(path, comment="=", low_memory=False)
    keep = [c for c in ("Kernel Name",) if c in df.columns] + [c for c in METRICS if c in df.columns]
    if not keep:
        raise ValueError("No requested columns found in the CSV header.")
    sub = df[keep].copy()
    if len(sub) and sub.iloc[0].astype(str).str.lower().apply(
            lambda x: any(t in x for t in ("%", "inst", "cycle", "block", "register"))).any():
        sub = sub.iloc[1:].reset_index(drop=True)
    cols = [c for c in METRICS if c in sub.columns]
    sub[cols] = sub[cols].replace({",": "", "%": ""}, regex=True).apply(pd.to_numeric, errors="coerce")
    sub = sub.iloc[[-1]] if len(sub) > 1 else sub
    if sub.empty:
        return {}
    num = sub.select_dtypes(include="number").columns
    sub = sub.copy()
    sub[num] = sub[num].round(3)

    def safe(v):
        if isinstance(v, np.generic):
            v = v.item()
        if isinstance(v, float) and math.isnan(v):
            return None
        return round(v, 3) if isinstance(v, float) else v
    return {str(r.pop("Kernel Name")): {k: safe(v) for k, v in r.items()} for r in sub.to_dict(orient="records")}


def test_csv_reading_matches_kernelagents_pandas_on_every_ncu_fixture():
    pytest.importorskip("pandas", reason="python3-pandas is not installed (the cross-check needs it)")
    checked = 0
    for path in sorted((FIXTURES / "ncu").rglob("*.csv")):
        try:
            want = json.dumps(kernelagent_with_pandas(path))
        except ValueError:
            want = "ValueError"  # pandas' ParserError is one
        try:
            got = json.dumps(read_ncu_csv(path.read_text(errors="replace"))[0])
        except ValueError:
            got = "ValueError"
        assert got == want, path
        checked += want != "ValueError"
    assert checked >= 30


# -- the wrapper ncu runs on this host -------------------------------------------

STUB_TORCH = '''
import contextlib
calls = []
class Tensor:
    def __init__(self, n, is_cuda=False):
        self.n, self.is_cuda, self.shape = n, is_cuda, (n,)
    def cuda(self):
        return Tensor(self.n, True)
class _Nvtx:
    range_push = staticmethod(lambda name: calls.append("push " + name))
    range_pop = staticmethod(lambda: calls.append("pop"))
class cuda:
    nvtx = _Nvtx
    synchronize = staticmethod(lambda: None)
manual_seed = lambda seed: None
no_grad = contextlib.nullcontext
'''
LAYER_PROBLEM = '''import torch
class Layer:
    def __init__(self):
        self.weight, self.bias, self.stride, self.padding = torch.Tensor(9, True), None, (2, 2), "same"
class Model:
    def __init__(self, *args):
        self.layer = Layer()
    def cuda(self):
        return self
    def eval(self):
        return self
    def modules(self):
        return [self, self.layer]
def get_inputs():
    return [torch.Tensor(4)]
def get_init_inputs():
    return [3, 8]
'''


@pytest.mark.parametrize("kernel_src,init,form,call", [
    ("def kernel_function(x):\n    return note(x)\n", "[]", "plain", "(4,) True"),
    ("def kernel_function(x, features, eps):\n    return note(x, features, eps)\n", "[64, 1e-6]", "init_inputs",
     "(4,) True 64 1e-06"),
    ("def kernel_function(x, weight, bias, stride=1):\n    return note(x, weight, bias, stride)\n", None, "model",
     "(4,) True (9,) True None 2"),
])
def test_wrapper_calls_kernel_function_in_its_form_after_three_warmups(tmp_path, kernel_src, init, form, call):
    import subprocess
    (tmp_path / "torch.py").write_text(STUB_TORCH)
    log = tmp_path / "calls.txt"
    note = (f"def note(*args):\n    with open({str(log)!r}, 'a') as f:\n"
            "        f.write(' '.join(str(getattr(a, 'shape', a)) + (' True' if getattr(a, 'is_cuda', False) else '')"
            " for a in args) + '\\n')\n    import torch\n    torch.calls.append('call')\n    return args[0]\n")
    (tmp_path / "k.py").write_text(note + kernel_src)
    problem = LAYER_PROBLEM if init is None else (
        f"import torch\ndef get_inputs():\n    return [torch.Tensor(4)]\ndef get_init_inputs():\n    return {init}\n")
    (tmp_path / "p.py").write_text(problem)
    wrapper = Path(KERNELAGENT_FILE).with_name("_ka_wrapper.py")
    out = subprocess.run([sys.executable, "-c",
                          f"import runpy, sys; sys.argv = ['w', 'k.py', 'p.py']; "
                          f"runpy.run_path({str(wrapper)!r}, run_name='__main__'); import torch; print(torch.calls)"],
                         cwd=tmp_path, env={**os.environ, "PYTHONPATH": str(tmp_path)}, capture_output=True,
                         text=True, timeout=30)
    assert out.returncode == 0, out.stderr
    assert f"kernel_function ran ({form})" in out.stdout, out.stdout
    assert "['call', 'call', 'call', 'push profeed', 'call', 'pop']" in out.stdout  # 3 warm-ups, then measured
    assert log.read_text().splitlines() == [call] * 4


def test_csv_that_does_not_parse_raises_value_error():
    with pytest.raises(ValueError, match="does not parse"):
        read_ncu_csv('"Kernel Name","sm__cycles_active.avg"\n"' + "k" * 200000 + '","1"\n')
    with pytest.raises(ValueError, match="No requested columns"):
        read_ncu_csv('"ID","Other"\n"0","1"\n')
