"""python3 -m profeed analyze|submit|status|mcp: the CLI's commands, from Python.

Exit codes are profeed's: 0 feedback, 1 our failure, 2 bad input, 3 the
profiler failed, 4 the farm did not answer or refused, 5 the job failed.
"""

from __future__ import annotations

import argparse
import json
import os
import sys

from . import analysis
from .errors import BadInput, JobFailed, ProfeedError, Unavailable

DEFAULT_ENDPOINT = os.environ.get("PROFEED_ENDPOINT", "tcp://127.0.0.1:5555")


def _exit_code(e: ProfeedError) -> int:
    if isinstance(e, BadInput):
        return 2
    if isinstance(e, Unavailable):
        return 4
    if isinstance(e, JobFailed):
        return 5
    return 1


def _farm_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--endpoint", default=DEFAULT_ENDPOINT)
    p.add_argument("--curve-secret")
    p.add_argument("--broker-key")
    p.add_argument("--insecure", action="store_true")


def main(argv: "list[str] | None" = None) -> int:
    parser = argparse.ArgumentParser(prog="python3 -m profeed")
    sub = parser.add_subparsers(dest="command", required=True)

    a = sub.add_parser("analyze", help="feedback from profiler output files (offline)")
    a.add_argument("files", nargs="+")
    a.add_argument("--profiler")
    a.add_argument("--language")
    a.add_argument("--arch", dest="gpu_arch")
    a.add_argument("--format", default="text", choices=analysis.FORMATS)
    a.add_argument("--device", dest="gpu_name")
    a.add_argument("--pci-id", dest="device_id")
    a.add_argument("--cpu", dest="cpu_info")
    a.add_argument("--top", type=int)
    a.add_argument("--max-chars", type=int)
    a.add_argument("--max-tokens", type=int)
    a.add_argument("--reference", action="append", default=[])

    s = sub.add_parser("submit", help="profile a command (or kernel + problem) on the farm")
    _farm_args(s)
    s.add_argument("--language", default="cuda")
    s.add_argument("--arch", dest="gpu_arch")
    s.add_argument("--profiler")
    s.add_argument("--json", action="store_true")
    s.add_argument("--format", default="text", choices=analysis.FORMATS)
    s.add_argument("--max-chars", type=int)
    s.add_argument("--max-tokens", type=int)
    s.add_argument("--source", action="store_true", help="ncu: add a source pass (source lines in findings)")
    s.add_argument("--top", type=int)
    s.add_argument("--min-share", type=float, help="a fraction of the time, 0..1")
    s.add_argument("--collated", action="store_true", help="JSON: include the collated per-launch metrics")
    s.add_argument("--job-id")
    s.add_argument("--timeout-s", type=int)
    s.add_argument("--wait-s", type=float)
    s.add_argument("--kernel")
    s.add_argument("--problem")
    s.add_argument("--plan")
    s.add_argument("--round", type=int)
    s.add_argument("--kernel-regex")
    s.add_argument("--nvtx-range")
    s.add_argument("--launch-skip", type=int)
    s.add_argument("--launch-count", type=int)
    s.add_argument("argv", nargs="*")

    st = sub.add_parser("status", help="the farm's workers, queue and jobs")
    _farm_args(st)
    st.add_argument("--wait-s", type=float, default=5.0)

    m = sub.add_parser("mcp", help="serve the Model Context Protocol on stdio")
    _farm_args(m)

    args = parser.parse_args(argv)
    try:
        if args.command == "analyze":
            worker = {k: getattr(args, k) for k in ("gpu_name", "device_id", "cpu_info") if getattr(args, k)}
            collated, feedback = analysis.analyze_files(args.files, worker, references=args.reference,
                                                        profiler=args.profiler, language=args.language,
                                                        gpu_arch=args.gpu_arch, fmt=args.format, top=args.top,
                                                        max_chars=args.max_chars, max_tokens=args.max_tokens)
            sys.stdout.write(feedback)
            return 3 if collated.get("status") == "profiler_error" else 0
        from .farm import Farm
        farm = Farm(args.endpoint, curve_secret=args.curve_secret, broker_key=args.broker_key,
                    insecure=args.insecure)
        if args.command == "status":
            print(json.dumps(farm.status(timeout_s=args.wait_s), indent=2))
            return 0
        if args.command == "mcp":
            farm.close()
            from .mcp import serve
            return serve(args.endpoint, curve_secret=args.curve_secret, broker_key=args.broker_key)
        fb = farm.submit(args.argv or None, kernel=args.kernel, problem=args.problem, language=args.language,
                         gpu_arch=args.gpu_arch, profiler=args.profiler, job_id=args.job_id,
                         timeout_s=args.timeout_s, plan=args.plan, round=args.round,
                         kernel_regex=args.kernel_regex, nvtx_range=args.nvtx_range,
                         launch_skip=args.launch_skip, launch_count=args.launch_count,
                         fmt="markdown" if args.format == "markdown" else "text", max_chars=args.max_chars,
                         top=args.top, min_share=args.min_share, max_tokens=args.max_tokens, source=args.source,
                         collated=args.collated and (args.json or args.format == "json"),
                         progress=(lambda j, state, d, c: print(f"[{j}] {state} {d}/{c}", file=sys.stderr))
                         if sys.stderr.isatty() else None, wait_s=args.wait_s)
        as_json = args.json or args.format == "json"
        sys.stdout.write(json.dumps(fb.json, indent=2) + "\n" if as_json and fb.json else fb.text)
        return {"ok": 0, "no_kernels": 0, "profiler_error": 3, "bad_input": 2}.get(fb.status, 5)
    except ProfeedError as e:
        print(f"profeed {args.command}: {e}", file=sys.stderr)
        return _exit_code(e)


if __name__ == "__main__":
    sys.exit(main())
