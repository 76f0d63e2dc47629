"""profeed.kernelagent: KernelAgent's KernelProfiler, with profeed's feedback.

Meta's KernelAgent profiles each round's kernel with
triton_kernel_agent/opt_worker_component/profiling/kernel_profiler.py:
ncu with 29 metrics (METRICS, in its order), --launch-skip=3
--launch-count=20, the last profiled launch kept, saved as
`logs_dir/roundNNN_ncu_metrics.json` = {"metrics": {kernel: {metric:
value}}, "metadata": {kernel_file, problem_file, round_num, timestamp,
ncu_version}}. This class does the same, on this host (running ncu itself)
or on a profeed farm, and adds profeed's feedback: on the returned
ProfilerResults (.feedback, .feedback_json) and in the file under the key
"profeed", which KernelAgent's readers never look at.

    from profeed.kernelagent import KernelProfiler
    profiler = KernelProfiler(logs_dir, farm=profeed.Farm("tcp://farm:5555", ...))
    results = profiler.profile_kernel(Path("kernel.py"), Path("problem.py"), round_num=3)
    if results:
        results.metrics, results.feedback

As KernelAgent's, profile_kernel returns None when profiling fails (ncu
missing or failing, a farm that does not answer or refuses), after logging
why; a missing kernel or problem file raises FileMissing, a
FileNotFoundError as KernelAgent's raises. profeed raises BadInput for a
round number that is not one. docs/python.md lists where it differs.
"""

from __future__ import annotations

import csv
import io
import json
import logging
import math
import os
import re
import shutil
import subprocess
import sys
import time
import uuid
from dataclasses import asdict, dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Optional, Union

from . import _native, analysis
from .errors import BadInput, FileMissing, JobFailed, ProfeedError, Unavailable

# KernelAgent's METRIC_COLUMNS (kernel_perf_agent/kernel_opt/profiler/ncu_profiler.py at
# meta-pytorch/KernelAgent a3001c7), in its order: the order of the JSON's keys.
METRICS: "list[str]" = [
    "sm__cycles_active.avg",
    "sm__warps_active.avg.pct_of_peak_sustained_active",
    "launch__occupancy_limit_blocks",
    "launch__occupancy_limit_registers",
    "launch__occupancy_limit_shared_mem",
    "launch__registers_per_thread",
    "sm__inst_executed.sum",
    "sm__inst_executed_pipe_fp32.avg.pct_of_peak_sustained_active",
    "sm__inst_executed_pipe_tensor.avg.pct_of_peak_sustained_active",
    "dram__bytes_read.sum",
    "dram__bytes_write.sum",
    "dram__throughput.avg.pct_of_peak_sustained_elapsed",
    "dram__bytes.sum.per_second",
    "gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed",
    "launch__shared_mem_per_block_allocated",
    "l1tex__t_sector_hit_rate.pct",
    "l1tex__throughput.avg.pct_of_peak_sustained_active",
    "lts__t_sector_hit_rate.pct",
    "lts__throughput.avg.pct_of_peak_sustained_active",
    "sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_elapsed",
    "smsp__sass_average_data_bytes_per_sector_mem_global_op_ld.pct",
    "smsp__warp_issue_stalled_memory_dependency_per_warp_active.pct",
    "smsp__warp_issue_stalled_short_scoreboard_per_warp_active.pct",
    "smsp__warp_issue_stalled_long_scoreboard_per_warp_active.pct",
    "smsp__warp_issue_stalled_barrier_per_warp_active.pct",
    "smsp__warp_issue_stalled_branch_resolving_per_warp_active.pct",
    "smsp__sass_average_branch_targets_threads_uniform.pct",
    "sm__throughput.avg.pct_of_peak_sustained_elapsed",
    "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed",
]
LAUNCH_SKIP = 3    # KernelAgent's: its wrapper's three warm-up launches
LAUNCH_COUNT = 20
DEFAULT_NCU_TIMEOUT_SECONDS = 300
DEFAULT_SEMAPHORE_TIMEOUT_SECONDS = 900
ROUND_DIGITS = 3
ROUND_MAX = 0xFFFFFFFF  # the farm's JobMetadata.round is a uint32
# KernelAgent's sign of a permission failure in ncu's output.
_PERMISSION = ("permission", "err_nvgpuctrperm", "profiling permissions", "requires root", "access denied")
_UNIT_TOKENS = ("%", "inst", "cycle", "block", "register", "register/thread")
# Cells pandas.read_csv reads as NaN (its default na_values).
_NA = {"", "#N/A", "#N/A N/A", "#NA", "-1.#IND", "-1.#QNAN", "-NaN", "-nan", "1.#IND", "1.#QNAN", "<NA>", "N/A",
       "NA", "NULL", "NaN", "None", "n/a", "nan", "null"}
_INT = re.compile(r"^\s*[+-]?\d+\s*$")
_LOG = logging.getLogger("profeed.kernelagent")


@dataclass
class ProfilerMetadata:
    """KernelAgent's metadata of a profiling run (the same fields, in order)."""
    kernel_file: str
    problem_file: str
    round_num: int
    timestamp: str
    ncu_version: Optional[str]


@dataclass
class ProfilerResults:
    """KernelAgent's ProfilerResults, plus profeed's feedback.

    `metrics` is {kernel name: {metric: value}}, as KernelAgent's;
    `metrics_df` the kept row as a pandas DataFrame when pandas is
    installed (profeed does not need it; None otherwise). `feedback` is
    profeed's text for the prompt, `feedback_json` the same as a dict;
    `source` is "host" or "farm", `job_id` the farm's job."""
    metrics_df: Any
    metrics: Any
    metadata: ProfilerMetadata
    feedback: str = ""
    feedback_json: Optional[dict] = None
    source: str = "host"
    job_id: Optional[str] = None
    notes: "list[str]" = field(default_factory=list)

    def to_dict(self) -> "dict[str, Any]":
        """KernelAgent's {"metrics", "metadata"}, with profeed's feedback
        under "profeed" (a key KernelAgent's readers ignore)."""
        profeed_part: "dict[str, Any]" = {"source": self.source, "feedback": self.feedback,
                                          "document": self.feedback_json, "notes": list(self.notes)}
        if self.job_id:
            profeed_part["job_id"] = self.job_id
        return {"metrics": self.metrics, "metadata": asdict(self.metadata), "profeed": profeed_part}

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=2)


# ---------------------------------------------------------------------------
# KernelAgent's reading of the CSV (load_ncu_metrics(select="last") and
# metrics_to_prompt), without pandas: the same row, keys and numbers.

def _numpy_round(v: float) -> float:
    """DataFrame.round(3) (numpy: rint(v * 1000) / 1000), then KernelAgent's
    round(v, 3): the same float KernelAgent writes."""
    scaled = v * 10 ** ROUND_DIGITS
    if math.isfinite(scaled):
        v = round(scaled) / 10 ** ROUND_DIGITS
    return round(v, ROUND_DIGITS)


def _cell_number(text: str) -> Union[int, float, None]:
    """pandas.to_numeric(errors="coerce") of a cell with ',' and '%' removed."""
    s = text.replace(",", "").replace("%", "")
    if s.strip() in _NA:
        return None
    if _INT.match(s):
        return int(s)
    try:
        return float(s)
    except ValueError:
        return None


def _column(header_cell: Optional[str], cells: "list[str]") -> "list[Union[int, float, None]]":
    """One metric column as pandas types it. read_csv makes a column numeric
    when every cell (the units row too) is empty or a number: then a missing
    one makes it float. Otherwise it is text, coerced after the units row is
    dropped: integer when every value is one, else float."""
    numbers = [_cell_number(c) for c in cells]
    as_float = any(n is None or isinstance(n, float) for n in numbers)
    if header_cell is not None and header_cell.strip() in _NA:
        as_float = True  # a numeric column with the (empty) units cell as NaN
    return [None if n is None else float(n) if as_float else n for n in numbers]


def _safe(v: Union[int, float, None]) -> Any:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return None
    if isinstance(v, float) and math.isinf(v):
        return "inf" if v > 0 else "-inf"
    if isinstance(v, float):
        return _numpy_round(v)
    return v


def read_ncu_csv(text: str) -> "tuple[Any, Optional[dict]]":
    """KernelAgent's metrics from ncu's raw-page CSV: (metrics, row) where
    metrics is {kernel name: {metric: value}} for the last profiled launch
    (KernelAgent's select="last" without names keeps one row of the whole
    table), {} when no launch was profiled, and row the kept values
    ({"Kernel Name": ..., metric: value}) or None.

    Raises ValueError as KernelAgent's does: no CSV header, or none of its
    columns wanted."""
    # pandas' comment="=" drops ncu's ==PROF== lines; blank lines are skipped.
    lines = [line for line in text.splitlines() if line.strip() and not line.lstrip().startswith("=")]
    if not lines:
        raise ValueError("No columns to parse from file")
    try:
        rows = list(csv.reader(io.StringIO("\n".join(lines))))
    except csv.Error as e:  # a cell over csv's field limit, a NUL: not a CSV KernelAgent reads either
        raise ValueError(f"the CSV does not parse: {e}") from None
    header, body = rows[0], rows[1:]
    keep = ([c for c in ("Kernel Name",) if c in header]) + [m for m in METRICS if m in header]
    if not keep:
        raise ValueError("No requested columns found in the CSV header.")
    # pandas: when the first data row has k more fields than the header, its
    # first k fields are the index and the named columns come after them.
    shift = max(len(body[0]) - len(header), 0) if body else 0
    index = {name: shift + header.index(name) for name in keep}
    table = [[row[index[c]] if index[c] < len(row) else "" for c in keep] for row in body]
    units = None
    if table and any(tok in cell.lower() for cell in table[0] for tok in _UNIT_TOKENS):
        units, table = table[0], table[1:]
    if not table:
        return {}, None
    columns = {}
    for j, name in enumerate(keep):
        if name == "Kernel Name":
            continue
        columns[name] = _column(units[j] if units is not None else None, [r[j] for r in table])
    last = len(table) - 1
    values = {name: _safe(col[last]) for name, col in columns.items()}
    row = dict(values)
    if "Kernel Name" not in keep:
        return [values], row  # KernelAgent: a list of rows without the key column
    name = table[last][keep.index("Kernel Name")]
    name = "nan" if name.strip() in _NA else name
    row = {"Kernel Name": name, **values}
    return {name: values}, row


def collated_csv(collated: Any) -> Optional[str]:
    """The raw page the farm's collated data carries (Feedback.json's
    "collated" of a job submitted with collated=True: every launch's cells as
    ncu printed them, under "raw", and the units row, "raw_units"), as a CSV
    that read_ncu_csv reads as it reads ncu's own: launches in capture order,
    columns in the units row's order. None when it carries no raw page (a
    details-only capture, or a farm that sent no collated data)."""
    launches = collated.get("launches") if isinstance(collated, dict) else None
    units = collated.get("raw_units") if isinstance(collated, dict) else None
    if not isinstance(launches, list) or not isinstance(units, dict):
        return None
    rows = [launch["raw"] for launch in launches if isinstance(launch, dict) and isinstance(launch.get("raw"), dict)]
    if not rows:
        return None
    columns = list(units)
    known = set(columns)
    for row in rows:
        for column in row:
            if column not in known:
                known.add(column)
                columns.append(column)
    out = io.StringIO()
    writer = csv.writer(out, quoting=csv.QUOTE_ALL, lineterminator="\n")
    writer.writerow(columns)
    writer.writerow([str(units.get(c, "")) for c in columns])
    for row in rows:
        writer.writerow([str(row.get(c, "")) for c in columns])
    return out.getvalue()


def _metrics_df(row: Optional[dict]) -> Any:
    try:
        import pandas as pd  # KernelAgent's type; profeed does not depend on it
    except ImportError:
        return None
    return pd.DataFrame([row] if row else [])


def _timestamp() -> str:
    # KernelAgent's datetime.utcnow().isoformat() + "Z", without the
    # deprecated call.
    return datetime.now(timezone.utc).replace(tzinfo=None).isoformat() + "Z"


def _check_round(round_num: Any) -> int:
    if isinstance(round_num, bool) or not isinstance(round_num, int):
        raise BadInput(f"round_num {round_num!r}: expected an int (the optimisation round), "
                       f"got {type(round_num).__name__}")
    if not 0 <= round_num <= ROUND_MAX:
        raise BadInput(f"round_num {round_num}: must be 0..{ROUND_MAX}")
    return round_num


def _check_file(path: Any, what: str) -> Path:
    if not isinstance(path, (str, os.PathLike)):
        raise BadInput(f"{what} {path!r}: expected a path, got {type(path).__name__}")
    p = Path(path)
    if not p.is_file():
        # KernelAgent's NCUWrapperFactory: FileNotFoundError("Kernel file not found: ...")
        raise FileMissing(f"{what.capitalize()} not found: {p}")
    return p


class KernelProfiler:
    """KernelAgent's KernelProfiler: profile_kernel(kernel_file, problem_file,
    round_num, max_retries=2) -> ProfilerResults | None, the JSON saved as
    logs_dir/roundNNN_ncu_metrics.json.

    `farm`, a profeed.Farm, runs the kernel + problem job on the farm's
    GPUs; without it ncu runs here, as KernelAgent runs it. The keyword
    arguments are KernelAgent's (its callers pass them by name): `logger`,
    `artifacts_dir` (the wrapper and ncu's CSV; default logs_dir/artifacts),
    `ncu_bin_path`, `ncu_timeout_seconds`, `profiling_semaphore`.
    `launch_skip`/`launch_count` are KernelAgent's 3 and 20 on this host; on
    the farm the collector's wrapper puts the measured launch in an NVTX
    range the plan profiles, so no launch is skipped unless asked.
    `plan` (farm): None sends KernelAgent's 29 metrics as a custom pass; a
    name ("core", "full") uses that plan of profeed's instead. `farm_options`
    go to Farm.submit (language, gpu_arch, timeout_s, ...)."""

    def __init__(self, logs_dir: Union[str, os.PathLike], farm: Any = None, *,
                 logger: Optional[logging.Logger] = None, artifacts_dir: Optional[Union[str, os.PathLike]] = None,
                 ncu_bin_path: Optional[str] = None, ncu_timeout_seconds: int = DEFAULT_NCU_TIMEOUT_SECONDS,
                 profiling_semaphore: Any = None, launch_skip: Optional[int] = None,
                 launch_count: int = LAUNCH_COUNT, plan: Optional[str] = None,
                 farm_options: Optional["dict[str, Any]"] = None) -> None:
        if not isinstance(logs_dir, (str, os.PathLike)):
            raise BadInput(f"logs_dir {logs_dir!r}: expected a path")
        if farm is not None and not callable(getattr(farm, "submit", None)):
            raise BadInput(f"farm {farm!r}: expected a profeed.Farm")
        for what, value in (("launch_skip", launch_skip), ("launch_count", launch_count),
                            ("ncu_timeout_seconds", ncu_timeout_seconds)):
            if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 0):
                raise BadInput(f"{what} {value!r}: expected a non-negative int")
        if not ncu_timeout_seconds:
            raise BadInput("ncu_timeout_seconds must be positive")
        self.logs_dir = Path(logs_dir)
        self.farm = farm
        self.logger = logger or _LOG
        self.artifacts_dir = Path(artifacts_dir) if artifacts_dir is not None else self.logs_dir / "artifacts"
        self.ncu_bin_path = ncu_bin_path
        self.ncu_timeout_seconds = ncu_timeout_seconds
        self.profiling_semaphore = profiling_semaphore
        self.launch_skip = launch_skip
        self.launch_count = launch_count
        self.plan = plan
        self.farm_options = dict(farm_options or {})
        self.last_error: Optional[str] = None  # why the last profile_kernel returned None
        self._ncu_version: Optional[str] = None
        self._ncu_version_read = False

    # -- KernelAgent's API --------------------------------------------------

    @property
    def ncu_version(self) -> Optional[str]:
        """`ncu --version`'s "Version X" (cached); None when ncu cannot say."""
        if not self._ncu_version_read:
            self._ncu_version_read = True
            try:
                out = subprocess.run([self.ncu_bin_path or "ncu", "--version"], capture_output=True, text=True,
                                     timeout=5)
                if out.returncode == 0:
                    for line in out.stdout.strip().split("\n"):
                        if line.startswith("Version "):
                            self._ncu_version = line.split()[1]
                            break
            except (OSError, subprocess.SubprocessError) as e:
                self.logger.debug(f"Failed to get NCU version: {e}")
        return self._ncu_version

    def profile_kernel(self, kernel_file: Union[str, os.PathLike], problem_file: Union[str, os.PathLike],
                       round_num: int, max_retries: int = 2) -> Optional[ProfilerResults]:
        """Profiles one round's kernel; ProfilerResults, or None on failure
        (logged; the reason also in self.last_error).

        Raises FileMissing (a FileNotFoundError) for a kernel or problem
        file that does not exist, BadInput for a round_num or max_retries
        that is not a non-negative int."""
        kernel = _check_file(kernel_file, "kernel file")
        problem = _check_file(problem_file, "problem file")
        round_num = _check_round(round_num)
        if isinstance(max_retries, bool) or not isinstance(max_retries, int) or max_retries < 1:
            raise BadInput(f"max_retries {max_retries!r}: expected an int of at least 1")
        self.last_error = None
        acquired = False
        if self.profiling_semaphore is not None:
            self.logger.info(f"[Round {round_num}] Waiting for profiling semaphore...")
            acquired = self.profiling_semaphore.acquire(timeout=DEFAULT_SEMAPHORE_TIMEOUT_SECONDS)
            if not acquired:
                return self._fail(f"[Round {round_num}] Semaphore timeout after "
                                  f"{DEFAULT_SEMAPHORE_TIMEOUT_SECONDS}s, skipping profiling for this round",
                                  warning=True)
        try:
            if self.farm is not None:
                return self._profile_on_farm(kernel, problem, round_num)
            return self._profile_here(kernel, problem, round_num, max_retries)
        finally:
            if acquired:
                self.profiling_semaphore.release()

    # -- shared -------------------------------------------------------------

    def _wait_with_backoff(self, attempt: int) -> None:
        wait = 2 ** attempt  # KernelAgent's back-off: 2, 4, 8 s
        self.logger.warning(f"Retrying in {wait}s...")
        time.sleep(wait)

    def _fail(self, message: str, warning: bool = False) -> None:
        self.last_error = message
        (self.logger.warning if warning else self.logger.error)(message)
        return None

    def _save(self, results: ProfilerResults) -> None:
        self.logs_dir.mkdir(parents=True, exist_ok=True)
        path = self.logs_dir / f"round{results.metadata.round_num:03d}_ncu_metrics.json"
        path.write_text(results.to_json())
        self.logger.debug(f"Saved metrics with metadata: {path}")

    # -- on this host, as KernelAgent ---------------------------------------

    def _ncu_command(self, ncu_bin: str, csv_path: Path, wrapper: Path, kernel: Path, problem: Path,
                     use_sudo: bool) -> "list[str]":
        """KernelAgent's ncu command line (profile_triton_kernel)."""
        cmd: "list[str]" = []
        if use_sudo:
            preserve = ",".join(["PATH", "LD_LIBRARY_PATH", "CUDA_VISIBLE_DEVICES", "PYTHONPATH", "TRITON_CACHE_DIR",
                                 "TORCH_EXTENSIONS_DIR", "CONDA_PREFIX", "CONDA_DEFAULT_ENV"])
            cmd += ["sudo", "-E", f"--preserve-env={preserve}"]
        skip = LAUNCH_SKIP if self.launch_skip is None else self.launch_skip
        python = os.environ.get("KERNEL_PROFILER_PYTHON") or sys.executable
        return cmd + [ncu_bin, "--csv", "--page=raw", "--kernel-name-base=demangled", "--target-processes=all",
                      "--replay-mode=kernel", "--profile-from-start=on", f"--log-file={csv_path}",
                      f"--metrics={','.join(METRICS)}", f"--launch-skip={skip}",
                      f"--launch-count={self.launch_count}", python, str(wrapper), str(kernel.resolve()),
                      str(problem.resolve())]

    def _run_ncu(self, kernel: Path, problem: Path, round_num: int) -> Path:
        """Runs ncu once; the CSV's path. Raises as KernelAgent's
        profile_triton_kernel: FileNotFoundError (no ncu, no CSV),
        RuntimeError (ncu failed), subprocess.TimeoutExpired."""
        ncu_bin = self.ncu_bin_path or shutil.which("ncu") or "/usr/local/cuda/bin/ncu"
        if not Path(ncu_bin).exists():
            raise FileNotFoundError(f"NCU binary not found: {ncu_bin}")
        workdir = self.artifacts_dir.resolve()
        workdir.mkdir(parents=True, exist_ok=True)
        wrapper = workdir / "ncu_wrapper.py"
        shutil.copyfile(Path(__file__).with_name("_ka_wrapper.py"), wrapper)
        csv_path = workdir / f"ncu_round_{round_num}.csv"
        if csv_path.exists():
            csv_path.unlink()  # a previous attempt's must not pass for this one's
        use_sudo = os.environ.get("KERNELAGENT_NCU_USE_SUDO", "0") == "1"
        env = dict(os.environ)
        env["PYTHONPATH"] = ":".join(sys.path)
        env["TRITON_CACHE_DIR"] = str(workdir / ".triton_cache")
        cmd = self._ncu_command(ncu_bin, csv_path, wrapper, kernel, problem, use_sudo)
        self.logger.info(f"[NCU] Running profiling: {' '.join(cmd[:10])}... (truncated)")
        result = subprocess.run(cmd, cwd=str(workdir), env=env, capture_output=True, text=True,
                                timeout=self.ncu_timeout_seconds)
        if result.returncode != 0:
            message = result.stderr or result.stdout
            if not use_sudo and any(p in message.lower() for p in _PERMISSION):
                raise RuntimeError("NCU requires elevated permissions on this system (set "
                                   "KERNELAGENT_NCU_USE_SUDO=1, or NVreg_RestrictProfilingToAdminUsers=0).\n"
                                   f"Original error:\n{message[:500]}")
            raise RuntimeError(f"NCU profiling failed with return code {result.returncode}:\n{message[:500]}")
        if not csv_path.exists():
            raise FileNotFoundError(f"NCU did not create output CSV: {csv_path}")
        size = csv_path.stat().st_size
        if size < 100:
            raise RuntimeError(f"NCU CSV file is too small ({size} bytes), likely empty")
        if size > _native.FILE_MAX:  # read whole below, as KernelAgent's pandas does: bounded
            raise RuntimeError(f"NCU CSV file {csv_path} is {size} bytes; at most {_native.FILE_MAX} are read")
        return csv_path

    def _profile_here(self, kernel: Path, problem: Path, round_num: int, max_retries: int) -> Optional[ProfilerResults]:
        for attempt in range(1, max_retries + 1):
            final = attempt >= max_retries
            try:
                self.logger.info(f"[Round {round_num}] NCU profiling attempt {attempt}/{max_retries}...")
                csv_path = self._run_ncu(kernel, problem, round_num)
                text = csv_path.read_text(errors="replace")
                metrics, row = read_ncu_csv(text)
                results = ProfilerResults(
                    metrics_df=_metrics_df(row), metrics=metrics,
                    metadata=ProfilerMetadata(kernel_file=str(kernel), problem_file=str(problem), round_num=round_num,
                                              timestamp=_timestamp(), ncu_version=self.ncu_version),
                    source="host")
                self._feedback_here(results, csv_path)
                self._save(results)
                self.logger.info(f"NCU profiling completed for round {round_num}")
                return results
            except FileNotFoundError as e:
                return self._fail(f"File not found during profiling: {e}")
            except subprocess.TimeoutExpired:
                why = f"NCU profiling timed out after {self.ncu_timeout_seconds}s (attempt {attempt}/{max_retries})"
            except (OSError, RuntimeError, ValueError, subprocess.SubprocessError) as e:
                why = f"NCU profiling failed (attempt {attempt}/{max_retries}): {e}"
            if final:
                return self._fail(why)
            self.logger.debug(why)
            self._wait_with_backoff(attempt)
        return self._fail(f"NCU profiling failed after {max_retries} attempts for round {round_num}")

    def _feedback_here(self, results: ProfilerResults, csv_path: Path) -> None:
        """profeed's analysis of the same CSV, beside KernelAgent's metrics.
        A capture profeed cannot read costs the feedback, not the metrics."""
        try:
            document, text = analysis.analyze_files([str(csv_path)], profiler="ncu")
            results.feedback, results.feedback_json = text, document
        except ProfeedError as e:
            results.notes.append(f"profeed could not analyze {csv_path.name}: {e}")
            self.logger.warning(results.notes[-1])

    # -- on the farm --------------------------------------------------------

    def _farm_plan(self) -> Any:
        if self.plan:
            return self.plan
        # One custom pass: the collector's fixed ncu options (--csv --page raw
        # --log-file, LC_ALL=C, the job's filter), then these.
        return [("kernelagent", ["--kernel-name-base", "demangled", "--metrics", ",".join(METRICS)])]

    def _profile_on_farm(self, kernel: Path, problem: Path, round_num: int) -> Optional[ProfilerResults]:
        # collated: the capture's cells come back as ncu printed them, so the
        # metrics are KernelAgent's reading of the same CSV (collated_csv).
        options: "dict[str, Any]" = {"language": "triton", "timeout_s": self.ncu_timeout_seconds, "fmt": "text",
                                     "collated": True}
        options.update(self.farm_options)
        options.setdefault("wait_s", options["timeout_s"] + 60)
        options.setdefault("job_id", f"ka-r{round_num:03d}-{uuid.uuid4().hex[:12]}")
        if self.launch_skip:
            options.setdefault("launch_skip", self.launch_skip)
        if self.launch_count:
            options.setdefault("launch_count", self.launch_count)
        try:
            fb = self.farm.submit(kernel=kernel, problem=problem, plan=self._farm_plan(), round=round_num or None,
                                  **options)
            fb.raise_for_status()
        except (Unavailable, JobFailed) as e:
            return self._fail(f"[Round {round_num}] profiling on the farm failed: {e}")
        kernels = fb.json.get("kernels") if isinstance(fb.json, dict) else None
        top = kernels[0] if isinstance(kernels, list) and kernels else None
        if fb.status != "ok" or not isinstance(top, dict):
            return self._fail(f"[Round {round_num}] the farm profiled no kernel (job {fb.job_id}, "
                              f"{fb.status}): {fb.text[:300]}")
        raw = collated_csv(fb.json.get("collated"))
        metrics, row, notes = None, None, []
        if raw is not None:
            try:
                metrics, row = read_ncu_csv(raw)  # the last launch, as on this host
            except ValueError as e:
                notes.append(f"the farm's raw page could not be read as KernelAgent reads ncu's CSV: {e}")
        if not metrics:
            # No raw page came back (the analyzer left the collated data out,
            # see the feedback's notes, or the capture had none): the values
            # the feedback carries for its busiest kernel stand in for the row.
            carried = top.get("metrics") if isinstance(top.get("metrics"), dict) else {}
            values = {m: _safe(carried[m]) for m in METRICS
                      if isinstance(carried.get(m), (int, float)) and not isinstance(carried.get(m), bool)}
            row = {"Kernel Name": str(top.get("name", "")), **values}
            metrics = {row["Kernel Name"]: values}
            notes.append(f"the farm sent no raw page of the capture; the feedback's values stand in: "
                         f"{len(values)} of KernelAgent's {len(METRICS)} metrics, for its busiest kernel "
                         f"{row['Kernel Name']}, in profeed's base units")
            self.logger.warning(notes[-1])
        version = fb.worker.get("profiler_version") or None
        results = ProfilerResults(
            metrics_df=_metrics_df(row), metrics=metrics,
            metadata=ProfilerMetadata(kernel_file=str(kernel), problem_file=str(problem), round_num=round_num,
                                      timestamp=_timestamp(), ncu_version=version),
            # The raw page served its purpose: the document is the feedback,
            # as on this host.
            feedback=fb.text, feedback_json={k: v for k, v in fb.json.items() if k != "collated"},
            source="farm", job_id=fb.job_id, notes=notes)
        self._save(results)
        self.logger.info(f"profiling on the farm completed for round {round_num} (job {fb.job_id})")
        return results


__all__ = ["KernelProfiler", "ProfilerResults", "ProfilerMetadata", "METRICS", "read_ncu_csv", "collated_csv"]
