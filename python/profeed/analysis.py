"""profeed.analyze: KernelFoundry's collate_and_create_feedback, in memory.

`outputs` is what KernelFoundry's profilers' read_output() return, keyed by
pass ("ncu.000", "unitrace.001"): {file name: text}, plus for unitrace a
"timeline" entry holding the chrome timeline already parsed from JSON. The
files keep their names, which carry meaning (trace.metrics.<pid>): the C
library identifies a pass in memory exactly as it would the files on disk.
Nothing is written to disk.
"""

from __future__ import annotations

import json
from typing import Any, Mapping, Optional

from . import _native
from .errors import BadInput, NativeError, TooBig, UnknownProfiler

PROFILERS = ("ncu", "unitrace", "unitrace_sampling", "vtune")
FORMATS = ("text", "json", "markdown")


def _file_bytes(pass_key: str, name: str, content: Any) -> bytes:
    """A file's content as bytes: text is UTF-8, a parsed timeline is JSON."""
    if isinstance(content, str):
        return content.encode("utf-8", "surrogateescape")
    if isinstance(content, (bytes, bytearray, memoryview)):
        return bytes(content)
    if name == "timeline" and isinstance(content, (dict, list)):
        try:
            return json.dumps(content, separators=(",", ":")).encode("utf-8")
        except (TypeError, ValueError) as e:
            raise BadInput(f"outputs[{pass_key!r}]['timeline']: not JSON-serializable: {e}") from None
    raise BadInput(f"outputs[{pass_key!r}][{name!r}]: content is {type(content).__name__}, "
                   "expected str or bytes (or, for 'timeline', the parsed JSON object)")


def _check_name(what: str, name: Any) -> str:
    if not isinstance(name, str) or not name:
        raise BadInput(f"{what}: expected a non-empty str, got {name!r}")
    if len(name.encode("utf-8", "surrogateescape")) > _native.NAME_MAX:
        raise BadInput(f"{what}: longer than {_native.NAME_MAX} bytes")
    if "\0" in name:
        raise BadInput(f"{what}: holds a NUL character")
    return name


def iter_files(outputs: Mapping[str, Mapping[str, Any]]):
    """(pass key, file name, bytes) for every file of `outputs`, validated."""
    if not isinstance(outputs, Mapping):
        raise BadInput(f"outputs: expected a dict of passes {{'ncu.000': {{name: text}}}}, "
                       f"got {type(outputs).__name__}")
    if not outputs:
        raise BadInput("outputs: no passes")
    count = total = 0
    for pass_key, files in outputs.items():
        _check_name("outputs: pass key", pass_key)
        if not isinstance(files, Mapping):
            raise BadInput(f"outputs[{pass_key!r}]: expected a dict {{file name: text}}, "
                           f"got {type(files).__name__}")
        for name, content in files.items():
            _check_name(f"outputs[{pass_key!r}]: file name", name)
            data = _file_bytes(pass_key, name, content)
            count += 1
            total += len(data)
            if len(data) > _native.FILE_MAX:
                raise TooBig(f"outputs[{pass_key!r}][{name!r}]: {len(data)} bytes; "
                             f"a pass file may hold at most {_native.FILE_MAX}")
            if total > _native.TOTAL_MAX:
                raise TooBig(f"outputs: more than {_native.TOTAL_MAX} bytes in all")
            if count > _native.FILES_MAX:
                raise TooBig(f"outputs: more than {_native.FILES_MAX} files")
            yield pass_key, name, data


def _options(worker_info: Optional[Mapping[str, Any]], language: Optional[str], profiler: Optional[str],
             fmt: str, extra: Mapping[str, Any]) -> list[tuple[str, str]]:
    if fmt not in FORMATS:
        raise BadInput(f"fmt: {fmt!r} is not one of {', '.join(FORMATS)}")
    if profiler is not None and profiler != "auto" and profiler not in PROFILERS:
        raise UnknownProfiler(f"profiler: unknown profiler {profiler!r} "
                              f"(profeed analyzes: {', '.join(PROFILERS)})")
    opts = [("format", fmt)]
    if profiler:
        opts.append(("profiler", profiler))
    if language:
        opts.append(("language", str(language)))
    if worker_info is not None:
        if not isinstance(worker_info, Mapping):
            raise BadInput(f"worker_info: expected a dict, got {type(worker_info).__name__}")
        for key, option in (("gpu_name", "device"), ("cpu_info", "cpu_model"), ("device_id", "pci_id"),
                            ("gpu_arch", "gpu_arch")):
            value = worker_info.get(key)
            if value is None or value == "":
                continue
            if key == "device_id" and isinstance(value, int):
                value = f"0x{value:04x}"
            if not isinstance(value, str):
                raise BadInput(f"worker_info[{key!r}]: expected str, got {type(value).__name__}")
            opts.append((option, value))
    for key, value in extra.items():
        if value is None:
            continue
        if isinstance(value, bool):
            value = "1" if value else "0"
        opts.append((key, str(value)))
    return opts


def _run(s: "_native.Session") -> tuple[dict, str]:
    """Runs a prepared session; (collated, feedback) or a typed exception."""
    rc = s.run()
    if rc == _native.ERROR:
        raise NativeError(s.error() or "the analysis failed (out of memory)")
    if rc == _native.BAD_INPUT:
        message = s.error()
        if "unknown profiler" in message:
            raise UnknownProfiler(message)
        if "larger than" in message or "more than" in message:
            raise TooBig(message)
        raise BadInput(message)
    feedback = s.output() or ""
    document = s.render("json")
    try:
        collated = json.loads(document) if document else {}
    except ValueError as e:  # ours: the library's JSON must parse
        raise NativeError(f"the library's JSON feedback does not parse: {e}") from None
    return collated, feedback


def analyze_files(paths: "list[str]", worker_info: Optional[Mapping[str, Any]] = None, *,
                  references: "list[str]" = (), language: Optional[str] = None, profiler: Optional[str] = None,
                  fmt: str = "text", baseline: "list[str]" = (), **options: Any) -> tuple[dict, str]:
    """analyze() for files on disk (what `profeed analyze FILE...` does): the
    files are read by the C library, an ncu capture streamed, never whole; a
    folder stands for the files in it (unitrace writes one a process).
    `baseline`: the files of an earlier round's capture (`--baseline`)."""
    if isinstance(paths, (str, bytes)) or not paths:
        raise BadInput("paths: expected a non-empty list of file paths")
    opts = _options(worker_info, language, profiler, fmt, options)
    with _native.Session() as s:
        for key, value in opts:
            if s.set(key, value) != _native.OK:
                raise BadInput(s.error())
        for path, ref in [(p, False) for p in paths] + [(p, True) for p in references]:
            if not isinstance(path, str) or not path:
                raise BadInput(f"paths: {path!r} is not a path")
            if s.add_path(path, ref) != _native.OK:
                raise BadInput(s.error())
        if isinstance(baseline, (str, bytes)):
            raise BadInput("baseline: expected a list of file paths")
        for path in baseline:
            if not isinstance(path, str) or not path:
                raise BadInput(f"baseline: {path!r} is not a path")
            if s.add_baseline_path(path) != _native.OK:
                raise BadInput(s.error())
        return _run(s)


def analyze(outputs: Mapping[str, Mapping[str, Any]], worker_info: Optional[Mapping[str, Any]] = None, *,
            language: Optional[str] = None, profiler: Optional[str] = None, fmt: str = "text",
            gpu_arch: Optional[str] = None, top: Optional[int] = None, min_share: Optional[float] = None,
            max_chars: Optional[int] = None, all_segments: bool = False,
            launches: bool = False, max_tokens: Optional[int] = None,
            baseline: Optional[Mapping[str, Mapping[str, Any]]] = None,
            stop_within: Optional[float] = None) -> tuple[dict, str]:
    """Analyzes one job's passes and returns (collated, feedback).

    `feedback` is profeed's feedback in `fmt` ("text" for an LLM prompt,
    "json", "markdown"); `collated` is the feedback as a dict (profeed's JSON
    document: status, device, kernels, findings, notes). With `launches`,
    it also holds the collated per-launch data under "collated" (ncu and
    vtune; it costs about as much again as the analysis, so it is asked for).
    `max_chars` / `max_tokens` bound the text (tokens as estimated on the safe
    side of the cl100k/o200k tokenizers; at least 64), the least important
    findings left out first. An ncu source page among the files
    (--page source) makes findings name their source lines.

    worker_info's `gpu_name`, `cpu_info` and `device_id` name the GPU (Intel
    rooflines need them). `language` with `gpu_arch` picks the profiler
    as KernelFoundry does; `profiler` names it; else it is detected.

    `baseline`: an earlier round's outputs, shaped as `outputs`; the
    feedback then opens with the change since it (docs/baselines.md), and
    collated["comparison"] holds it. `stop_within` (default 1.15): say
    "consider stopping" when every kernel that matters is within this factor
    of its ceiling.

    Raises BadInput (malformed outputs, non-string contents, a bad option),
    UnknownProfiler, TooBig (a pass over the limits) or NativeError. A
    profiler that reported an error is not an exception: the feedback says so.
    """
    opts = _options(worker_info, language, profiler, fmt,
                    {"gpu_arch": gpu_arch, "top": top, "min_share": min_share, "max_chars": max_chars,
                     "max_tokens": max_tokens,
                     "all_segments": all_segments or None, "with_collated": launches or None,
                     "stop_within": stop_within})
    with _native.Session() as s:
        for key, value in opts:
            if s.set(key, value) != _native.OK:
                raise BadInput(s.error())
        for pass_key, name, data in iter_files(outputs):
            rc = s.add(pass_key, name, data)
            if rc == _native.BAD_INPUT:
                raise BadInput(s.error())
            if rc != _native.OK:
                raise NativeError(s.error() or "profeed_session_add failed")
        for pass_key, name, data in iter_files(baseline) if baseline is not None else ():
            rc = s.add_baseline(pass_key, name, data)
            if rc == _native.BAD_INPUT:
                raise BadInput(s.error())
            if rc != _native.OK:
                raise NativeError(s.error() or "profeed_session_add_baseline failed")
        return _run(s)
