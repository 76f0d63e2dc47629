"""profeed.Farm: submit a job to a profeed broker and wait for its feedback.

The client speaks the farm's wire protocol itself (docs/protocol.md): one
DEALER socket to the broker's agent endpoint, every message one frame
holding one packed Envelope (profeed_pb2, generated from proto/profeed.proto
at build time). While it waits it heartbeats the broker; when the broker
falls silent it reconnects and submits the job again, which is safe because
the job id makes submission idempotent. Every wait ends: with the job's
Feedback, or with an exception saying why there is none.

    farm = profeed.Farm("tcp://127.0.0.1:5555")
    fb = farm.submit(["./bench"], language="cuda", gpu_arch="sm_90", wait_s=120)
    print(fb.text)
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import time
import uuid
from dataclasses import dataclass, field
from typing import Any, Callable, Optional, Sequence, Union

import zmq
from google.protobuf import json_format
from google.protobuf.message import DecodeError

from . import profeed_pb2 as pb
from .errors import BadInput, FarmTimeout, JobFailed, Refused, Unavailable

PROTOCOL_VERSION = 1
# The broker's limit on one message (WIRE_MAX_MSG); a feedback is the largest.
MAX_MSG = 64 * 1024 * 1024
_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$")

LANGUAGES = {"cuda": pb.LANGUAGE_CUDA, "triton": pb.LANGUAGE_TRITON, "pytorch": pb.LANGUAGE_PYTORCH,
             "sycl": pb.LANGUAGE_SYCL, "ocl": pb.LANGUAGE_OCL}
PROFILERS = {"ncu": pb.PROFILER_NCU, "unitrace": pb.PROFILER_UNITRACE, "vtune": pb.PROFILER_VTUNE}
_STATUS = {pb.FEEDBACK_STATUS_OK: "ok", pb.FEEDBACK_STATUS_NO_KERNELS: "no_kernels",
           pb.FEEDBACK_STATUS_PROFILER_ERROR: "profiler_error", pb.FEEDBACK_STATUS_BAD_INPUT: "bad_input",
           pb.FEEDBACK_STATUS_TIMED_OUT: "timed_out",
           pb.FEEDBACK_STATUS_FAILED_AFTER_RETRIES: "failed_after_retries",
           pb.FEEDBACK_STATUS_NO_CAPABLE_WORKER: "no_capable_worker"}
# Silent windows (heartbeat x liveness each) a broker that answered once is
# given to come back before a wait gives up on it (PROFEED_FARM_LOST_WINDOWS).
LOST_WINDOWS = 10

ProgressFn = Callable[[str, str, int, int], None]
FileArg = Union[str, os.PathLike, "tuple[str, Union[str, bytes]]"]
# A named plan ("core"), or custom passes: [(name, [profiler args]), ...].
PlanArg = Union[str, Sequence["tuple[str, Sequence[str]]"]]


@dataclass
class Feedback:
    """A job's feedback as the farm delivered it."""
    job_id: str
    status: str                 # ok, no_kernels, profiler_error, bad_input, timed_out, failed_after_retries,
                                # no_capable_worker
    text: str                   # ready for an LLM prompt
    json: Optional[dict]        # the analyzer's JSON document, None when the broker made the feedback
    errors: list = field(default_factory=list)
    notes: list = field(default_factory=list)
    worker: dict = field(default_factory=dict)    # WorkerInfo: where it was measured (gpu_name, profiler_version)
    metadata: dict = field(default_factory=dict)  # the request's JobMetadata, plus the feedback's timestamp

    @property
    def ok(self) -> bool:
        return self.status in ("ok", "no_kernels")

    def raise_for_status(self) -> "Feedback":
        """Raises JobFailed unless the job produced feedback (ok or no kernels)."""
        if not self.ok:
            raise JobFailed(f"job {self.job_id}: {self.status}: " + ("; ".join(self.errors) or self.text[:200]))
        return self


def endpoint_is_local(endpoint: str) -> bool:
    """Whether traffic to `endpoint` stays on this machine (as the C library judges it)."""
    if endpoint.startswith(("ipc://", "inproc://")):
        return True
    if not endpoint.startswith("tcp://"):
        return False
    host = endpoint[6:].split(";")[-1]
    return host.startswith(("127.", "localhost:", "[::1]:", "lo:"))


def _load_cert(path: str, what: str) -> tuple[bytes, Optional[bytes]]:
    """(public, secret) Z85 keys of a czmq certificate file (profeed keygen)."""
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read(65536)
    except OSError as e:
        raise BadInput(f"{what} {path}: cannot read: {e.strerror}") from None
    keys = dict(re.findall(r'^\s*(public-key|secret-key)\s*=\s*"([^"]{40})"', text, re.M))
    if "public-key" not in keys:
        raise BadInput(f"{what} {path}: no public-key in it (a NAME.key or NAME.key_secret of profeed keygen?)")
    secret = keys.get("secret-key")
    return keys["public-key"].encode(), secret.encode() if secret else None


def _file(arg: FileArg, what: str) -> "pb.File":
    """A File message from a path or a (name, content) pair."""
    if isinstance(arg, tuple):
        name, content = arg
        data = content.encode() if isinstance(content, str) else bytes(content)
    else:
        path = os.fspath(arg)
        try:
            with open(path, "rb") as f:
                data = f.read(MAX_MSG + 1)
        except OSError as e:
            raise BadInput(f"{what} {path}: cannot read: {e.strerror}") from None
        name = os.path.basename(path)
    if not isinstance(name, str) or not name or "/" in name or name in (".", ".."):
        raise BadInput(f"{what}: {name!r} is not a plain file name")
    if len(data) > MAX_MSG:
        raise BadInput(f"{what} {name}: larger than the farm's {MAX_MSG} byte message limit")
    return pb.File(name=name, content=data)


class Farm:
    """One connection to a broker's agent endpoint. Not thread-safe: one Farm
    per thread (submit_async runs each call on a connection of its own)."""

    def __init__(self, endpoint: str, *, curve_secret: Optional[str] = None, broker_key: Optional[str] = None,
                 insecure: bool = False, heartbeat_ms: int = 1000, liveness: int = 3,
                 connect_timeout_s: Optional[float] = None) -> None:
        if not isinstance(endpoint, str) or "://" not in endpoint:
            raise BadInput(f"endpoint {endpoint!r}: expected tcp://host:port, ipc://path or inproc://name")
        if connect_timeout_s is None:  # as the C client: one silent window
            connect_timeout_s = heartbeat_ms * liveness / 1000
        if heartbeat_ms <= 0 or liveness <= 0 or connect_timeout_s <= 0:
            raise BadInput("heartbeat_ms, liveness and connect_timeout_s must be positive")
        self.endpoint = endpoint
        self.heartbeat_ms = heartbeat_ms
        self.liveness = liveness
        self.connect_timeout_s = connect_timeout_s
        self._curve: Optional[tuple[bytes, bytes, bytes]] = None
        self._settings = dict(curve_secret=curve_secret, broker_key=broker_key, insecure=insecure,
                              heartbeat_ms=heartbeat_ms, liveness=liveness, connect_timeout_s=connect_timeout_s)
        if curve_secret:
            if not broker_key:
                raise BadInput("curve_secret needs broker_key (the broker's public NAME.key)")
            public, secret = _load_cert(curve_secret, "curve_secret")
            if not secret:
                raise BadInput(f"curve_secret {curve_secret}: holds no secret key (give the NAME.key_secret file)")
            server, _ = _load_cert(broker_key, "broker_key")
            self._curve = (public, secret, server)
        elif not endpoint_is_local(endpoint) and not insecure:
            raise BadInput(f"{endpoint} leaves this machine, and no curve_secret is set: give this agent its "
                           "certificate (profeed keygen; docs/security.md) or pass insecure=True")
        self._ctx = zmq.Context.instance()
        self._sock: Optional[zmq.Socket] = None
        self.strays = 0  # feedbacks for a job this handle was not waiting for
        self._connect()

    def _connect(self) -> None:
        if self._sock is not None:
            self._sock.close(0)
        s = self._ctx.socket(zmq.DEALER)
        s.setsockopt(zmq.LINGER, 0)
        s.setsockopt(zmq.SNDHWM, 1000)
        s.setsockopt(zmq.RCVHWM, 1000)
        s.setsockopt(zmq.MAXMSGSIZE, MAX_MSG + 1024)
        if self._curve:
            public, secret, server = self._curve
            s.curve_publickey, s.curve_secretkey, s.curve_serverkey = public, secret, server
        try:
            s.connect(self.endpoint)
        except zmq.ZMQError as e:
            s.close(0)
            raise BadInput(f"cannot connect to {self.endpoint!r}: {e}") from None
        self._sock = s

    def close(self) -> None:
        if self._sock is not None:
            self._sock.close(0)
            self._sock = None

    def __enter__(self) -> "Farm":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _send(self, **body: Any) -> None:
        env = pb.Envelope(protocol_version=PROTOCOL_VERSION, **body)
        data = env.SerializeToString()
        if len(data) > MAX_MSG:
            raise BadInput(f"the request is {len(data)} bytes; the farm takes at most {MAX_MSG}")
        try:
            self._sock.send(data, zmq.DONTWAIT)
        except zmq.Again:
            pass  # the queue to the broker is full; the heartbeat loop sends again

    def _recv(self, timeout_ms: int) -> Optional["pb.Envelope"]:
        if not self._sock.poll(max(0, timeout_ms), zmq.POLLIN):
            return None
        frames = self._sock.recv_multipart(zmq.DONTWAIT)
        env = pb.Envelope()
        try:
            env.ParseFromString(frames[-1])
        except DecodeError:
            return pb.Envelope()  # not ours to act on; it still proves the broker is alive
        return env

    def _request(self, argv: Optional[Sequence[str]], kernel: Optional[FileArg], problem: Optional[FileArg],
                 language: str, gpu_arch: Optional[str], profiler: Optional[str], job_id: str,
                 agent_id: Optional[str], timeout_s: Optional[int], plan: Optional[PlanArg], round: Optional[int],
                 kernel_regex: Optional[str], nvtx_range: Optional[str], launch_skip: Optional[int],
                 launch_count: Optional[int], progress: bool, fmt: str, max_chars: Optional[int],
                 top: Optional[int], min_share: Optional[float], max_tokens: Optional[int] = None,
                 source: bool = False, collated: bool = False) -> "pb.JobRequest":
        if language not in LANGUAGES:
            raise BadInput(f"unknown language {language!r} ({', '.join(LANGUAGES)})")
        if profiler is not None and profiler not in PROFILERS:
            raise BadInput(f"unknown profiler {profiler!r} ({', '.join(PROFILERS)})")
        for what, value in (("job_id", job_id), ("agent_id", agent_id)):
            if value is not None and not _ID.match(value):
                raise BadInput(f"{what} {value!r}: 1..128 of [A-Za-z0-9._:-], starting with a letter or digit")
        req = pb.JobRequest(job_id=job_id, language=LANGUAGES[language], progress=progress)
        if agent_id:
            req.agent_id = agent_id
        if gpu_arch:
            req.gpu_arch = gpu_arch
        if profiler:
            req.profiler = PROFILERS[profiler]
        if (argv is None) == (kernel is None):
            raise BadInput("give a command (argv) or a kernel (with its problem), not both or neither")
        if kernel is not None:
            if problem is None:
                raise BadInput("a kernel job needs its problem file")
            req.kernel.kernel_file.CopyFrom(_file(kernel, "kernel"))
            req.kernel.problem_file.CopyFrom(_file(problem, "problem"))
            req.metadata.kernel_file_name = req.kernel.kernel_file.name
            req.metadata.problem_file_name = req.kernel.problem_file.name
        else:
            if isinstance(argv, (str, bytes)) or not argv or not all(isinstance(a, str) for a in argv):
                raise BadInput("argv: expected a non-empty list of str (the command and its arguments)")
            req.command.argv.extend(argv)
        if round:
            req.metadata.round = int(round)
        if isinstance(plan, str):
            if plan:
                req.passes.add(name=plan)
        elif plan is not None:
            # Custom passes: (name, args) each; the args follow the
            # profiler's fixed options (docs/protocol.md, "pass plan").
            if isinstance(plan, (bytes, dict)) or not plan:
                raise BadInput("plan: a plan name, or a non-empty list of (name, [args]) custom passes")
            for spec in plan:
                if not (isinstance(spec, (tuple, list)) and len(spec) == 2 and isinstance(spec[0], str)
                        and spec[0] and not isinstance(spec[1], (str, bytes))
                        and all(isinstance(a, str) for a in spec[1])):
                    raise BadInput(f"plan: {spec!r} is not a (name, [args]) custom pass")
                req.passes.add(name=spec[0], args=list(spec[1]))
        if timeout_s is not None:
            if not 1 <= int(timeout_s) <= 86400:
                raise BadInput(f"timeout_s {timeout_s}: 1..86400")
            req.timeout_s = int(timeout_s)
        if kernel_regex:
            req.filter.kernel_regex = kernel_regex
        if nvtx_range:
            req.filter.nvtx_range = nvtx_range
        if launch_skip:
            req.filter.launch_skip = int(launch_skip)
        if launch_count:
            req.filter.launch_count = int(launch_count)
        # The feedback's shape, as profeed submit sends it: only what was asked.
        if fmt not in ("text", "json", "markdown"):
            raise BadInput(f"fmt {fmt!r}: text, json or markdown")
        if max_chars:
            if fmt != "text":
                raise BadInput("max_chars bounds the text format only; JSON and Markdown are never cut")
            if not 200 <= int(max_chars) <= 0xFFFFFFFF:
                raise BadInput(f"max_chars {max_chars} is too small: a feedback needs at least 200 characters")
            req.shape.max_chars = int(max_chars)
        if max_tokens:
            if fmt != "text":
                raise BadInput("max_tokens bounds the text format only; JSON and Markdown are never cut")
            if not 64 <= int(max_tokens) <= 0xFFFFFFFF:
                raise BadInput(f"max_tokens {max_tokens} is too small: a feedback needs at least 64 tokens")
            req.shape.max_tokens = int(max_tokens)
        if source:
            req.source = True
        if fmt == "markdown":
            req.shape.text_format = pb.TEXT_FORMAT_MARKDOWN
        if top:
            req.shape.top = int(top)
        if min_share is not None:
            if not 0 <= float(min_share) <= 1:
                raise BadInput(f"min_share {min_share} is not a share of time in 0..1")
            req.shape.min_share = float(min_share)
        if collated:
            req.shape.collated = True
        return req

    def submit(self, argv: Optional[Sequence[str]] = None, *, kernel: Optional[FileArg] = None,
               problem: Optional[FileArg] = None, language: str = "cuda", gpu_arch: Optional[str] = None,
               profiler: Optional[str] = None, job_id: Optional[str] = None, agent_id: Optional[str] = None,
               timeout_s: Optional[int] = None, plan: Optional[PlanArg] = None, round: Optional[int] = None,
               kernel_regex: Optional[str] = None, nvtx_range: Optional[str] = None,
               launch_skip: Optional[int] = None, launch_count: Optional[int] = None, fmt: str = "text",
               max_chars: Optional[int] = None, top: Optional[int] = None, min_share: Optional[float] = None,
               progress: Optional[ProgressFn] = None, wait_s: Optional[float] = None,
               max_tokens: Optional[int] = None, source: bool = False,
               baseline_job: Optional[str] = None, collated: bool = False) -> Feedback:
        """Submits a job and waits for its feedback.

        A command job: `argv` ["./bench", "--n", "4096"]. A kernel + problem
        job (KernelBench style): `kernel` and `problem`, each a path or a
        (file name, source) pair. The other arguments are `profeed submit`'s
        options; `plan` names a plan ("core") or, beyond the command line,
        gives custom passes [(name, [profiler args])] as the wire protocol has them; `fmt` "markdown" makes Feedback.text Markdown, and `max_chars`,
        `max_tokens`, `top`, `min_share` shape the feedback as profeed analyze's do;
        `collated` puts the capture's per-launch values in Feedback.json["collated"] (left out,
        with a note in Feedback.notes, when they would pass the analyzer's message limit);
        `source` (ncu) adds a source pass so findings name their source lines. `progress(job_id, state, done, count)` is called on each
        progress report. `baseline_job`: an earlier finished job of this
        agent (its job id); the feedback opens with the change since it, and
        Feedback.json["comparison"] holds it (docs/baselines.md). `wait_s` bounds the whole wait (default: the job's
        timeout_s + 60 s, else 660 s).

        Returns the Feedback (its status may say the profiler failed, or the
        farm timed out or gave up: see Feedback.raise_for_status). Raises
        BadInput (a malformed request, or the broker refused it as one),
        Refused (no capable worker, a duplicate job id, ...), Unavailable
        (the broker never answered within connect_timeout_s, or stopped
        answering for LOST_WINDOWS heartbeat windows) or FarmTimeout (no
        feedback within wait_s)."""
        job_id = job_id or str(uuid.uuid4())
        req = self._request(argv, kernel, problem, language, gpu_arch, profiler, job_id, agent_id, timeout_s,
                            plan, round, kernel_regex, nvtx_range, launch_skip, launch_count, progress is not None,
                            fmt, max_chars, top, min_share, max_tokens, source, bool(collated))
        if baseline_job is not None:
            if not _ID.match(baseline_job):
                raise BadInput(f"baseline_job {baseline_job!r}: 1..128 of [A-Za-z0-9._:-], starting with a letter "
                               "or digit")
            req.baseline_job_id = baseline_job
        if wait_s is None:
            wait_s = (timeout_s or 600) + 60
        if wait_s <= 0:
            raise BadInput(f"wait_s {wait_s}: must be positive")
        return self._run(req, float(wait_s), progress)

    def _run(self, req: "pb.JobRequest", wait_s: float, progress: Optional[ProgressFn]) -> Feedback:
        job_id = req.job_id
        now = time.monotonic
        start = now()
        deadline = start + wait_s
        heard = False          # has the broker answered since the job was submitted?
        last_heard = window_start = start  # the last answer; the start of the current silent window
        self._send(submit=req)
        next_hb = start + self.heartbeat_ms / 1000
        silence = self.heartbeat_ms * self.liveness / 1000
        while True:
            t = now()
            if t >= deadline:
                if not heard:
                    raise Unavailable(f"no answer from the broker at {self.endpoint} within {wait_s:g} s "
                                      f"(job {job_id} not accepted)")
                raise FarmTimeout(f"no feedback for job {job_id} within {wait_s:g} s "
                                  f"(last heard from the broker {t - last_heard:.1f} s ago)")
            if not heard and t - start >= self.connect_timeout_s:
                raise Unavailable(f"no answer from the broker at {self.endpoint} within "
                                  f"{self.connect_timeout_s:g} s: is it running, and is the endpoint right?")
            if heard and t - last_heard > LOST_WINDOWS * silence:
                raise Unavailable(f"no answer from the broker at {self.endpoint} for {t - last_heard:.1f} s; it "
                                  f"answered before, and job {job_id} may still finish there: submit the same "
                                  "job_id again later")
            if t >= next_hb:
                if t - window_start >= silence:
                    # The broker is gone or restarted: a new connection and the
                    # job again (idempotent by its id).
                    self._connect()
                    self._send(submit=req)
                    window_start = t
                else:
                    self._send(heartbeat=pb.Heartbeat(job_ids=[job_id]))
                next_hb = t + self.heartbeat_ms / 1000
            wait = min(next_hb, deadline) - t
            if not heard:
                wait = min(wait, start + self.connect_timeout_s - t)
            env = self._recv(int(max(wait, 0) * 1000) + 1)
            if env is None:
                continue
            heard = True
            last_heard = window_start = now()
            body = env.WhichOneof("body")
            if body == "progress":
                p = env.progress
                if progress and p.job_id == job_id:
                    progress(job_id, p.state, p.passes_done, p.pass_count)
            elif body == "feedback":
                fb = env.feedback
                if fb.job_id != job_id:
                    self.strays += 1  # a second delivery of an earlier job's
                    continue
                self._send(ack=pb.Ack(job_id=job_id))
                return self._feedback(fb)
            elif body == "error":
                e = env.error
                if e.HasField("job_id") and e.job_id != job_id:
                    continue
                if e.code == pb.ERROR_CODE_UNKNOWN_JOB:
                    self._send(submit=req)  # a restarted broker: submit again
                    continue
                if e.code == pb.ERROR_CODE_OVERLOADED and e.HasField("retry_after_ms") and \
                        now() + e.retry_after_ms / 1000 < deadline:
                    if progress:
                        progress(job_id, f"the farm is busy; submitting again in {e.retry_after_ms} ms", 0, 0)
                    time.sleep(e.retry_after_ms / 1000)
                    self._send(submit=req)
                    continue
                text = e.text or "the broker refused the job"
                code = pb.ErrorCode.Name(e.code) if e.code in pb.ErrorCode.values() else str(e.code)
                if e.code == pb.ERROR_CODE_BAD_REQUEST:
                    raise BadInput(f"job {job_id}: the broker refused the request ({code}): {text}")
                raise Refused(f"job {job_id}: refused by the broker at {self.endpoint} ({code}): {text}")

    @staticmethod
    def _feedback(fb: "pb.Feedback") -> Feedback:
        document = None
        if fb.HasField("json"):
            try:
                document = json.loads(fb.json)
            except ValueError:
                document = None
        as_dict = lambda m: json_format.MessageToDict(m, preserving_proto_field_name=True)  # noqa: E731
        return Feedback(job_id=fb.job_id, status=_STATUS.get(fb.status, "unknown"), text=fb.text,
                        json=document, errors=list(fb.errors), notes=list(fb.notes),
                        worker=as_dict(fb.worker) if fb.HasField("worker") else {},
                        metadata=as_dict(fb.metadata) if fb.HasField("metadata") else {})

    async def submit_async(self, *args: Any, **kwargs: Any) -> Feedback:
        """submit() for asyncio: runs on a worker thread with a connection of
        its own, so several jobs can be awaited at once."""
        def run() -> Feedback:
            with Farm(self.endpoint, **self._settings) as farm:
                return farm.submit(*args, **kwargs)
        return await asyncio.get_running_loop().run_in_executor(None, run)

    def status(self, timeout_s: float = 5.0) -> dict:
        """What the farm is doing: workers, queue, jobs in flight, counters.
        Raises Unavailable when the broker does not answer within timeout_s."""
        self._send(status_request=pb.StatusRequest())
        deadline = time.monotonic() + timeout_s
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise Unavailable(f"no answer from the broker at {self.endpoint} within {timeout_s:g} s")
            env = self._recv(int(left * 1000) + 1)
            if env is not None and env.WhichOneof("body") == "status":
                return json_format.MessageToDict(env.status, preserving_proto_field_name=True)


def submit(endpoint: str, *args: Any, **kwargs: Any) -> Feedback:
    """One job on the farm at `endpoint`, in one call: Farm(endpoint).submit(...)."""
    farm_kwargs = {k: kwargs.pop(k) for k in ("curve_secret", "broker_key", "insecure") if k in kwargs}
    with Farm(endpoint, **farm_kwargs) as farm:
        return farm.submit(*args, **kwargs)


__all__ = ["Farm", "Feedback", "submit", "endpoint_is_local"]
