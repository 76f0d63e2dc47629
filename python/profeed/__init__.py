"""profeed: GPU profiler output in, optimization feedback for LLM agents out.

    import profeed
    collated, feedback = profeed.analyze({"ncu.000": {"ncu_report.csv": text}}, worker_info)

The analysis runs in this process (libprofeed-client through ctypes); the
farm client (profeed.Farm) speaks the wire protocol to a broker.
"""

from __future__ import annotations

from ._config import VERSION as __version__
from .analysis import analyze
from .errors import (BadInput, FarmTimeout, FileMissing, JobFailed, NativeError, ProfeedError, Refused,
                     TooBig, Unavailable, UnknownProfiler)

__all__ = ["analyze", "Farm", "Feedback", "ProfeedError", "BadInput", "UnknownProfiler", "TooBig",
           "NativeError", "FileMissing", "Unavailable", "Refused", "FarmTimeout", "JobFailed", "__version__"]


def __getattr__(name: str):
    # The farm client needs zmq and protobuf; analysis alone does not.
    if name in ("Farm", "Feedback"):
        from . import farm
        return getattr(farm, name)
    raise AttributeError(f"module 'profeed' has no attribute {name!r}")
