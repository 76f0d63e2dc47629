"""The exceptions profeed raises: one base class, one subclass per cause.

Every message names what was wrong (the pass, the file, the option, the
endpoint), so an agent can log it and move on.
"""

from __future__ import annotations


class ProfeedError(Exception):
    """Base class of every profeed error."""


class BadInput(ProfeedError, ValueError):
    """The outputs dict, a file in it, or an option is malformed."""


class UnknownProfiler(BadInput):
    """A profiler profeed does not analyze was named."""


class TooBig(BadInput):
    """A pass file (or all of them together) exceeds profeed's limits."""


class NativeError(ProfeedError):
    """The C library failed (out of memory) or could not be loaded."""


class Unavailable(ProfeedError):
    """The farm did not answer: broker unreachable or no worker for the job."""


class Refused(Unavailable):
    """The broker refused the job (no capable worker, bad request, not allowed)."""


class FarmTimeout(Unavailable):
    """No feedback arrived within the caller's timeout."""


class JobFailed(ProfeedError):
    """The farm ran the job and it timed out or failed after its retries."""


class FileMissing(BadInput, FileNotFoundError):
    """A file an argument names does not exist (a FileNotFoundError too, as
    KernelAgent's wrapper factory raises for a missing kernel or problem file)."""
