"""profeed mcp: a Model Context Protocol server on stdio.

JSON-RPC 2.0, one message per line (MCP's stdio transport), protocol
revision 2025-11-25 (and the earlier revisions the client may ask for).
Tools:

  analyze_profile  profiler output (files by path, or inline content) -> feedback
  submit_job       a command or kernel + problem job on a profeed farm -> feedback
  farm_status      the farm's workers, queue and jobs

Results are text plus structured content; a failure of the tool (bad input,
a farm that does not answer) is an MCP tool error (isError), a malformed
request a JSON-RPC error. A request that carries a progressToken gets
notifications/progress while its job runs. Requests are served one at a
time, in order.
"""

from __future__ import annotations

import json
import sys
from typing import Any, BinaryIO, Callable, Optional

from . import __version__
from .analysis import FORMATS, PROFILERS, analyze, analyze_files
from .errors import ProfeedError

PROTOCOL_VERSIONS = ("2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05")
# One message; inline profiler output rides in it, so this is generous.
MAX_LINE = 256 * 1024 * 1024

PARSE_ERROR, INVALID_REQUEST, METHOD_NOT_FOUND, INVALID_PARAMS, INTERNAL_ERROR = -32700, -32600, -32601, -32602, -32603

_WORKER = {
    "gpu_name": {"type": "string", "description": "GPU name (lspci or nvidia-smi), for rooflines"},
    "cpu_info": {"type": "string", "description": "CPU model, which names integrated Intel GPUs"},
    "device_id": {"type": "string", "description": "PCI device id, e.g. 0xe20b"},
}
_FORMAT = {"type": "string", "enum": list(FORMATS), "default": "text",
           "description": "text (for a prompt), json or markdown"}

TOOLS = [
    {
        "name": "analyze_profile",
        "title": "Analyze GPU profiler output",
        "description": "Turns GPU profiler output (Nsight Compute CSV, Intel unitrace metrics and chrome "
                       "timelines, VTune reports) into optimization feedback: the kernels that matter, what "
                       "bounds each, and what to change. Give files by path, or their content inline.",
        "inputSchema": {
            "type": "object",
            "properties": {
                "files": {"type": "array", "items": {"type": "string"}, "description": "paths of profiler output"},
                "baseline_files": {"type": "array", "items": {"type": "string"},
                                   "description": "with files: paths of an earlier round's profiler output; the "
                                                  "feedback opens with the change since it"},
                "content": {
                    "type": "array",
                    "description": "inline files: name (it carries meaning: trace.metrics.<pid>), text, and "
                                   "the pass they belong to (ncu.000, unitrace.001)",
                    "items": {"type": "object",
                              "properties": {"name": {"type": "string"}, "text": {"type": "string"},
                                             "pass_key": {"type": "string"}},
                              "required": ["name", "text"]},
                },
                "profiler": {"type": "string", "enum": list(PROFILERS) + ["auto"]},
                "language": {"type": "string", "enum": ["cuda", "triton", "pytorch", "sycl", "ocl"]},
                "gpu_arch": {"type": "string"},
                "format": _FORMAT,
                "top": {"type": "integer", "minimum": 0, "description": "analyze at most this many kernels"},
                "max_chars": {"type": "integer", "minimum": 0, "description": "text: keep the feedback within this"},
                "max_tokens": {"type": "integer", "minimum": 0,
                               "description": "text: within this many tokens, estimated on the safe side (0: all, "
                                              "else >= 64)"},
                **_WORKER,
            },
        },
    },
    {
        "name": "submit_job",
        "title": "Profile a job on the farm",
        "description": "Profiles a command, or a kernel file with its problem file (KernelBench style), on a "
                       "profeed farm's GPUs and returns the feedback. Progress is reported while it runs.",
        "inputSchema": {
            "type": "object",
            "properties": {
                "endpoint": {"type": "string", "description": "the broker's agent endpoint"},
                "command": {"type": "array", "items": {"type": "string"}, "minItems": 1},
                "kernel_file": {"type": "string", "description": "path of the kernel (defines kernel_function)"},
                "problem_file": {"type": "string", "description": "path of the problem (Model, get_inputs)"},
                "language": {"type": "string", "enum": ["cuda", "triton", "pytorch", "sycl", "ocl"],
                             "default": "cuda"},
                "gpu_arch": {"type": "string"},
                "profiler": {"type": "string", "enum": ["ncu", "unitrace", "vtune"]},
                "job_id": {"type": "string"},
                "timeout_s": {"type": "integer", "minimum": 1, "maximum": 86400},
                "wait_s": {"type": "number", "exclusiveMinimum": 0},
                "plan": {"type": "string"},
                "round": {"type": "integer", "minimum": 0},
                "baseline_job": {"type": "string",
                                 "description": "an earlier finished job of yours: the feedback opens with the "
                                                "change since it"},
                "kernel_regex": {"type": "string"},
                "nvtx_range": {"type": "string"},
                "launch_skip": {"type": "integer", "minimum": 0},
                "launch_count": {"type": "integer", "minimum": 1},
                "format": {"type": "string", "enum": ["text", "json", "markdown"], "default": "text"},
                "max_chars": {"type": "integer", "minimum": 0, "description": "text: within this (0: all, else >= 200)"},
                "max_tokens": {"type": "integer", "minimum": 0, "description": "text: within this many tokens (0: all, "
                                                                               "else >= 64)"},
                "source": {"type": "boolean", "description": "ncu: add a source pass so findings name their "
                                                            "source lines (build with -lineinfo)"},
                "top": {"type": "integer", "minimum": 0},
                "min_share": {"type": "number", "minimum": 0, "maximum": 1},
            },
        },
    },
    {
        "name": "farm_status",
        "title": "Farm status",
        "description": "The farm's workers (GPUs, load), queued and running jobs, and its counters.",
        "inputSchema": {"type": "object",
                        "properties": {"endpoint": {"type": "string"},
                                       "timeout_s": {"type": "number", "exclusiveMinimum": 0}}},
    },
]


class ToolError(Exception):
    """A tool's own failure: reported as an MCP tool error (isError)."""


class Server:
    def __init__(self, endpoint: str, out: BinaryIO, *, curve_secret: Optional[str] = None,
                 broker_key: Optional[str] = None) -> None:
        self.endpoint = endpoint
        self.out = out
        self.farm_settings = {"curve_secret": curve_secret, "broker_key": broker_key}
        self.initialized = False

    # -- transport -----------------------------------------------------------
    def send(self, message: dict) -> None:
        data = json.dumps(message, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
        self.out.write(data + b"\n")
        self.out.flush()

    def reply(self, msg_id: Any, result: dict) -> None:
        self.send({"jsonrpc": "2.0", "id": msg_id, "result": result})

    def error(self, msg_id: Any, code: int, message: str) -> None:
        self.send({"jsonrpc": "2.0", "id": msg_id, "error": {"code": code, "message": message}})

    def handle_line(self, line: bytes) -> None:
        try:
            msg = json.loads(line)
        except (ValueError, UnicodeDecodeError) as e:
            self.error(None, PARSE_ERROR, f"not JSON: {e}")
            return
        if isinstance(msg, list):
            self.error(None, INVALID_REQUEST, "batches are not part of this MCP revision")
            return
        if not isinstance(msg, dict) or msg.get("jsonrpc") != "2.0":
            self.error(msg.get("id") if isinstance(msg, dict) else None, INVALID_REQUEST,
                       "expected a JSON-RPC 2.0 object")
            return
        method = msg.get("method")
        if "id" not in msg:  # a notification, or a response to us: nothing to answer
            return
        msg_id = msg["id"]
        if not isinstance(method, str):
            self.error(msg_id, INVALID_REQUEST, "no method")
            return
        params = msg.get("params") or {}
        if not isinstance(params, dict):
            self.error(msg_id, INVALID_PARAMS, "params: expected an object")
            return
        handler = {"initialize": self.initialize, "ping": lambda _p, _i: {}, "tools/list": self.tools_list,
                   "tools/call": self.tools_call}.get(method)
        if handler is None:
            self.error(msg_id, METHOD_NOT_FOUND, f"method {method!r} not found")
            return
        try:
            result = handler(params, msg_id)
        except _InvalidParams as e:
            self.error(msg_id, INVALID_PARAMS, str(e))
            return
        except Exception as e:  # ours: say so rather than die
            self.error(msg_id, INTERNAL_ERROR, f"{type(e).__name__}: {e}")
            return
        self.reply(msg_id, result)

    # -- methods -------------------------------------------------------------
    def initialize(self, params: dict, _id: Any) -> dict:
        asked = params.get("protocolVersion")
        version = asked if asked in PROTOCOL_VERSIONS else PROTOCOL_VERSIONS[0]
        self.initialized = True
        return {
            "protocolVersion": version,
            "capabilities": {"tools": {"listChanged": False}},
            "serverInfo": {"name": "profeed", "title": "profeed GPU profiler feedback", "version": __version__},
            "instructions": "analyze_profile turns profiler output into feedback; submit_job profiles a "
                            "command or kernel on the farm; farm_status shows the farm.",
        }

    def tools_list(self, _params: dict, _id: Any) -> dict:
        return {"tools": TOOLS}

    def tools_call(self, params: dict, _id: Any) -> dict:
        name = params.get("name")
        args = params.get("arguments") or {}
        if not isinstance(args, dict):
            raise _InvalidParams("arguments: expected an object")
        tool = {"analyze_profile": self.analyze_profile, "submit_job": self.submit_job,
                "farm_status": self.farm_status}.get(name)
        if tool is None:
            raise _InvalidParams(f"unknown tool {name!r} (analyze_profile, submit_job, farm_status)")
        token = (params.get("_meta") or {}).get("progressToken")
        try:
            text, structured = tool(args, self._progress_fn(token))
        except (ToolError, ProfeedError) as e:
            return {"content": [{"type": "text", "text": f"{name}: {e}"}], "isError": True}
        return {"content": [{"type": "text", "text": text}], "structuredContent": structured, "isError": False}

    def _progress_fn(self, token: Any) -> Optional[Callable[[str, str, int, int], None]]:
        if token is None:
            return None
        step = [0]

        def report(job_id: str, state: str, done: int, count: int) -> None:
            # MCP wants progress to grow with every notification.
            step[0] += 1
            note: dict = {"progressToken": token, "progress": step[0],
                          "message": f"job {job_id}: {state}" + (f" ({done}/{count} passes)" if count else "")}
            self.send({"jsonrpc": "2.0", "method": "notifications/progress", "params": note})
        return report

    # -- tools ---------------------------------------------------------------
    def analyze_profile(self, args: dict, _progress: Any) -> tuple[str, dict]:
        files, content = args.get("files"), args.get("content")
        if not files and not content:
            raise ToolError("give files (paths) or content (inline files)")
        worker = {k: args[k] for k in _WORKER if args.get(k)}
        common = dict(language=args.get("language"), profiler=args.get("profiler"), fmt=args.get("format", "text"),
                      gpu_arch=args.get("gpu_arch"), top=args.get("top"), max_chars=args.get("max_chars"),
                      max_tokens=args.get("max_tokens"))
        if files:
            if not isinstance(files, list) or not all(isinstance(f, str) for f in files):
                raise ToolError("files: expected a list of paths")
            if content:
                raise ToolError("give files or content, not both")
            baseline = args.get("baseline_files") or []
            if not isinstance(baseline, list) or not all(isinstance(f, str) for f in baseline):
                raise ToolError("baseline_files: expected a list of paths")
            collated, feedback = analyze_files(files, worker, baseline=baseline, **common)
        else:
            if not isinstance(content, list):
                raise ToolError("content: expected a list of {name, text, pass_key}")
            if args.get("baseline_files"):
                raise ToolError("baseline_files goes with files (paths), not with inline content")
            outputs: dict = {}
            for i, item in enumerate(content):
                if not isinstance(item, dict) or not isinstance(item.get("name"), str) or \
                        not isinstance(item.get("text"), str):
                    raise ToolError(f"content[{i}]: expected {{name: str, text: str, pass_key?: str}}")
                key = item.get("pass_key") or "pass.000"
                if not isinstance(key, str):
                    raise ToolError(f"content[{i}].pass_key: expected a string")
                outputs.setdefault(key, {})[item["name"]] = item["text"]
            collated, feedback = analyze(outputs, worker, **common)
        return feedback, collated

    def _farm(self, args: dict):
        from .farm import Farm
        endpoint = args.get("endpoint") or self.endpoint
        return Farm(endpoint, **self.farm_settings)

    def submit_job(self, args: dict, progress: Any) -> tuple[str, dict]:
        command, kernel, problem = args.get("command"), args.get("kernel_file"), args.get("problem_file")
        options = {k: args[k] for k in ("language", "gpu_arch", "profiler", "job_id", "timeout_s", "wait_s", "plan",
                                        "round", "kernel_regex", "nvtx_range", "launch_skip", "launch_count",
                                        "max_chars", "max_tokens", "source", "top", "min_share", "baseline_job")
                   if args.get(k) is not None}
        fmt = args.get("format", "text")
        with self._farm(args) as farm:
            fb = farm.submit(command, kernel=kernel, problem=problem, progress=progress,
                             fmt="markdown" if fmt == "markdown" else "text", **options)
        structured = {"job_id": fb.job_id, "status": fb.status, "feedback": fb.json, "errors": fb.errors}
        text = json.dumps(fb.json, indent=2) if fmt == "json" and fb.json else fb.text
        if not fb.ok:
            raise ToolError(f"job {fb.job_id} ended {fb.status}: " + ("; ".join(fb.errors) or fb.text))
        return text, structured

    def farm_status(self, args: dict, _progress: Any) -> tuple[str, dict]:
        timeout = args.get("timeout_s", 5)
        if not isinstance(timeout, (int, float)) or timeout <= 0:
            raise ToolError("timeout_s: expected a positive number")
        with self._farm(args) as farm:
            st = farm.status(timeout_s=float(timeout))
        lines = [f"workers: {len(st.get('workers', []))}"]
        for w in st.get("workers", []):
            r = w.get("worker", {})
            role = r.get("role", "").replace("WORKER_ROLE_", "").lower()
            gpus = ", ".join(f"{g.get('name')} ({g.get('arch', '?')})" for g in r.get("gpus", []))
            lines.append(f"  {role} {r.get('worker_id')} on {r.get('host', '?')}, busy {w.get('busy', 0)}"
                         + (f", {gpus}" if gpus else ""))
        lines.append(f"jobs: {st.get('queued', 0)} queued, {st.get('in_flight', 0)} in flight, "
                     f"{st.get('finished', 0)} finished")
        return "\n".join(lines), st


class _InvalidParams(Exception):
    pass


def serve(endpoint: str, stdin: BinaryIO = None, stdout: BinaryIO = None, **farm: Any) -> int:
    """Serves MCP on stdin/stdout until stdin closes."""
    stdin = stdin or sys.stdin.buffer
    server = Server(endpoint, stdout or sys.stdout.buffer, **farm)
    while True:
        line = stdin.readline(MAX_LINE + 1)
        if not line:
            return 0
        if len(line) > MAX_LINE and not line.endswith(b"\n"):
            # Too long to be one of ours: skip to its end, say so.
            while line and not line.endswith(b"\n"):
                line = stdin.readline(1 << 20)
            server.error(None, INVALID_REQUEST, f"message longer than {MAX_LINE} bytes")
            continue
        if line.strip():
            server.handle_line(line)
