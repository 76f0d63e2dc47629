"""ctypes bindings of libprofeed-client's buffer API (profeed_session.h).

Only opaque handles and plain C types cross this boundary, so a library
with more options than this module knows still loads and works. Every size
is checked here before the C library sees it.
"""

from __future__ import annotations

import ctypes
import os
from typing import Optional

from . import _config
from .errors import NativeError

# Result codes (profeed_result_t).
OK, ERROR, BAD_INPUT, PROFILER_ERROR, UNAVAILABLE, FAILED = range(6)

# The limits of profeed_session.h, checked on this side too so that the
# message can name the Python object.
FILE_MAX = 1 << 30
TOTAL_MAX = 2 << 30
FILES_MAX = 1024
NAME_MAX = 1024

_ABI = 2  # 2: profeed_session_add_baseline*()
_lib: Optional[ctypes.CDLL] = None


def _candidates() -> list[str]:
    """Where the library may be: $PROFEED_LIBRARY, else beside this package
    as `cmake --install` placed it."""
    env = os.environ.get("PROFEED_LIBRARY")
    if env:
        return [env]
    here = os.path.dirname(os.path.abspath(__file__))
    return [os.path.normpath(os.path.join(here, _config.LIBRARY_RELPATH, _config.LIBRARY_NAME))]


def lib() -> ctypes.CDLL:
    """The loaded library, its functions typed; loaded once."""
    global _lib
    if _lib is not None:
        return _lib
    errors = []
    for path in _candidates():
        try:
            handle = ctypes.CDLL(path)
            break
        except OSError as e:
            errors.append(f"{path}: {e}")
    else:
        raise NativeError("cannot load libprofeed-client: " + "; ".join(errors) +
                          " (set PROFEED_LIBRARY to its path)")
    handle.profeed_session_abi.restype = ctypes.c_int
    handle.profeed_session_abi.argtypes = []
    abi = handle.profeed_session_abi()
    if abi < _ABI:
        raise NativeError(f"libprofeed-client has session ABI {abi}; this package needs {_ABI} or later")
    p = ctypes.c_void_p
    sigs = {
        "profeed_session_new": (p, []),
        "profeed_session_destroy": (None, [ctypes.POINTER(p)]),
        "profeed_session_set": (ctypes.c_int, [p, ctypes.c_char_p, ctypes.c_char_p]),
        "profeed_session_add": (ctypes.c_int, [p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p,
                                               ctypes.c_size_t]),
        "profeed_session_add_path": (ctypes.c_int, [p, ctypes.c_char_p, ctypes.c_int]),
        "profeed_session_add_baseline": (ctypes.c_int, [p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p,
                                                        ctypes.c_size_t]),
        "profeed_session_add_baseline_path": (ctypes.c_int, [p, ctypes.c_char_p]),
        "profeed_session_run": (ctypes.c_int, [p]),
        "profeed_session_output": (ctypes.c_void_p, [p]),
        "profeed_session_output_len": (ctypes.c_size_t, [p]),
        "profeed_session_render": (ctypes.c_void_p, [p, ctypes.c_char_p]),
        "profeed_session_error": (ctypes.c_char_p, [p]),
        "profeed_session_result": (ctypes.c_int, [p]),
    }
    for name, (restype, argtypes) in sigs.items():
        fn = getattr(handle, name)
        fn.restype = restype
        fn.argtypes = argtypes
    _lib = handle
    return handle


class Session:
    """One analysis in the C library; a context manager that frees it."""

    def __init__(self) -> None:
        self._lib = lib()
        self._h = ctypes.c_void_p(self._lib.profeed_session_new())
        if not self._h.value:
            raise NativeError("profeed_session_new: out of memory")

    def __enter__(self) -> "Session":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __del__(self) -> None:
        self.close()

    def close(self) -> None:
        if getattr(self, "_h", None) is not None and self._h.value:
            self._lib.profeed_session_destroy(ctypes.byref(self._h))
        self._h = None

    def error(self) -> str:
        raw = self._lib.profeed_session_error(self._h)
        return raw.decode("utf-8", "replace") if raw else ""

    def set(self, key: str, value: str) -> int:
        return self._lib.profeed_session_set(self._h, key.encode(), value.encode())

    def add(self, pass_key: Optional[str], name: str, data: bytes) -> int:
        return self._lib.profeed_session_add(self._h, pass_key.encode() if pass_key is not None else None,
                                             name.encode(), data, len(data))

    def add_path(self, path: str, reference: bool = False) -> int:
        return self._lib.profeed_session_add_path(self._h, os.fsencode(path), 1 if reference else 0)

    def add_baseline(self, pass_key: Optional[str], name: str, data: bytes) -> int:
        return self._lib.profeed_session_add_baseline(self._h, pass_key.encode() if pass_key is not None else None,
                                                      name.encode(), data, len(data))

    def add_baseline_path(self, path: str) -> int:
        return self._lib.profeed_session_add_baseline_path(self._h, os.fsencode(path))

    def run(self) -> int:
        return self._lib.profeed_session_run(self._h)

    def output(self) -> Optional[str]:
        ptr = self._lib.profeed_session_output(self._h)
        if not ptr:
            return None
        n = self._lib.profeed_session_output_len(self._h)
        return ctypes.string_at(ptr, n).decode("utf-8", "replace")

    def render(self, fmt: str) -> Optional[str]:
        ptr = self._lib.profeed_session_render(self._h, fmt.encode())
        return ctypes.string_at(ptr).decode("utf-8", "replace") if ptr else None
