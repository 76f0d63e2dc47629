"""The names KernelFoundry's callers use, backed by profeed.

A KernelFoundry evaluator that changes only its import,

    -from kernelfoundry.eval_pipeline.profiler_feedback import get_profiler_feedback_class
    +from profeed.kernelfoundry import get_profiler_feedback_class

gets profeed's feedback from the same `outputs` and `worker_info`. The
selection table, its defaults and its errors are KernelFoundry's
(eval_pipeline/profiler_feedback.py); the analysis is profeed's C library.
"""

from __future__ import annotations

import logging
from typing import Any, Mapping, Optional

from .analysis import analyze
from .errors import ProfeedError

PROFILER_ANALYSIS_INTRO = "Your code has been analyzed with a profiler. Here is a summary of the results:"

# GPU architectures KernelFoundry treats as CUDA when it picks a profiler for
# pytorch and triton.
VALID_CUDA_ARCHS = ["Maxwell", "Pascal", "Volta", "Turing", "Ampere", "Hopper", "Ada", "native", "A100",
                    "A6000", "L40S", "L4"]

_log = logging.getLogger("profeed.kernelfoundry")


class ProfilerFeedback:
    """What KernelFoundry's classes share: collate the passes of one profiler,
    then turn them into feedback. Here collation keeps the passes (profeed
    analyzes them in one step, with worker_info) and create_feedback runs
    profeed on them."""

    name = ""
    #: the profiler profeed analyzes the passes with
    profiler = ""

    def __init__(self, config: Optional[Mapping[str, Any]] = None) -> None:
        self.config = dict(config or {})

    def _passes(self, outputs: Mapping[str, Mapping[str, Any]]) -> dict:
        """This profiler's passes (the reference's, "<name>_ref.NNN", too)."""
        return {k: v for k, v in outputs.items() if isinstance(k, str) and k.startswith(self.name)}

    def collate_data(self, outputs: Mapping[str, Mapping[str, Any]]) -> dict:
        """The passes of this profiler, as create_feedback takes them."""
        return {"profiler": self.profiler, "outputs": self._passes(outputs)}

    def create_feedback(self, data: Mapping[str, Any], worker_info: Mapping[str, Any]) -> str:
        """profeed's text feedback, or "" when there is nothing to analyze or
        the passes cannot be read (logged, as KernelFoundry does)."""
        passes = data.get("outputs") if isinstance(data, Mapping) else None
        if not passes:
            return ""
        try:
            return analyze(passes, worker_info, profiler=self.profiler)[1]
        except ProfeedError as e:
            _log.error("Error creating %s profiler feedback: %s", self.name, e)
            return ""

    def collate_and_create_feedback(self, outputs: Mapping[str, Mapping[str, Any]],
                                    worker_info: Mapping[str, Any]) -> tuple[dict, str]:
        """(collated, feedback): the collated dict is profeed's feedback as a
        dict (with the collated per-launch data where the analyzer keeps it),
        the feedback its text."""
        passes = self._passes(outputs)
        if not passes:
            return {}, ""
        try:
            return analyze(passes, worker_info, profiler=self.profiler)
        except ProfeedError as e:
            _log.error("Error creating %s profiler feedback: %s", self.name, e)
            return {"profiler": self.profiler, "outputs": passes}, ""

    def __call__(self, outputs: Mapping[str, Mapping[str, Any]], worker_info: Optional[Mapping[str, Any]] = None) -> str:
        return self.collate_and_create_feedback(outputs, worker_info or {})[1]


class NCUProfilerFeedback(ProfilerFeedback):
    """Nsight Compute (pass "ncu.000": {"ncu_report.csv": text})."""
    name = "ncu"
    profiler = "ncu"


class UnitraceProfilerFeedback(ProfilerFeedback):
    """Intel unitrace, metric-query mode (passes "unitrace.NNN": trace.metrics.<pid>, timeline)."""
    name = "unitrace"
    profiler = "unitrace"


class OCLUnitraceProfilerFeedback(UnitraceProfilerFeedback):
    """Intel unitrace on OpenCL, metric-sampling mode."""
    name = "unitrace"
    profiler = "unitrace"


class VTuneProfilerFeedback(ProfilerFeedback):
    """Intel VTune GPU hotspots (pass "vtune.000": {"vtune_counters.json": text})."""
    name = "vtune"
    profiler = "vtune"


_PROFILER_FEEDBACK_MAPPING = {
    ("sycl", "unitrace"): UnitraceProfilerFeedback,
    ("sycl", "vtune"): VTuneProfilerFeedback,
    ("ocl", "unitrace"): OCLUnitraceProfilerFeedback,
    ("ocl", "vtune"): VTuneProfilerFeedback,
    ("cuda", "ncu"): NCUProfilerFeedback,
    ("pytorch", "ncu"): NCUProfilerFeedback,
    ("pytorch", "unitrace"): UnitraceProfilerFeedback,
    ("triton", "ncu"): NCUProfilerFeedback,
    ("triton", "unitrace"): UnitraceProfilerFeedback,
}

_DEFAULT_PROFILER_FEEDBACK = {"sycl": "unitrace", "ocl": "vtune", "cuda": "ncu"}


def get_profiler_feedback_class(language: str, gpu_arch: str,
                                profiler_type: Optional[str] = None) -> type[ProfilerFeedback]:
    """The feedback class for a language and GPU, or the named profiler's.

    pytorch and triton use ncu on a CUDA architecture and unitrace otherwise;
    sycl defaults to unitrace, ocl to vtune, cuda to ncu. An unknown pair
    raises ValueError naming the profilers that work for the language."""
    language = language.lower()
    if profiler_type is None:
        if language in ("pytorch", "triton"):
            return NCUProfilerFeedback if gpu_arch in VALID_CUDA_ARCHS else UnitraceProfilerFeedback
        profiler_type = _DEFAULT_PROFILER_FEEDBACK.get(language)
    key = (language, profiler_type.lower() if profiler_type else None)
    if key in _PROFILER_FEEDBACK_MAPPING:
        return _PROFILER_FEEDBACK_MAPPING[key]
    available = [p for (lang, p) in _PROFILER_FEEDBACK_MAPPING if lang == language]
    raise ValueError(f"Unknown profiler '{profiler_type}' for language '{language}'. "
                     f"Available profilers for '{language}': {available}")


def get_reference_language_for_profiling(config: Mapping[str, Any]) -> str:
    """The language the reference implementation is profiled in: the
    prompt's reference_language, except that a PyTorch reference is profiled
    in the kernel's own language."""
    ref_language = config.get("prompt", {}).get("reference_language", config.get("language"))
    if ref_language == "Pytorch":
        return config.get("language")
    return ref_language
