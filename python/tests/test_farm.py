"""profeed.Farm against real broker, replay collector and analyzer processes
(ipc:// endpoints in a private folder: no ports to collide on). Every wait
ends, with feedback or with an exception that says why."""

import asyncio
import os
import shutil
import signal
import subprocess
import tempfile
import threading
import time

import pytest

import profeed
from conftest import BUILD, FIXTURES

HB = ["--heartbeat-ms", "200", "--liveness", "3"]


class FarmProcs:
    """A broker, a replay collector and an analyzer; stopped at the end."""

    def __init__(self, curve=False, replay_map=None):
        self.dir = tempfile.mkdtemp(prefix="pf-py-")
        self.replay_map = replay_map or str(FIXTURES / "replay/h200.map")
        self.agents = f"ipc://{self.dir}/agents"
        self.workers = f"ipc://{self.dir}/workers"
        self.procs = []
        self.broker = None
        self.keys = os.path.join(self.dir, "keys")
        self.broker_flags, self.worker_flags, self.agent = [], {}, {}
        if curve:
            self._keys()

    def _keys(self):
        """CURVE certificates made with profeed keygen; agent1 is allowed, stranger not."""
        for name in ("broker", "c1", "a1", "agent1", "stranger"):
            subprocess.run([str(BUILD / "client/profeed"), "keygen", name, "--dir", self.keys], check=True,
                           stdout=subprocess.DEVNULL)
        for sub, name in (("agents", "agent1"), ("collectors", "c1"), ("analyzers", "a1")):
            os.makedirs(os.path.join(self.keys, sub))
            shutil.copy(os.path.join(self.keys, name + ".key"), os.path.join(self.keys, sub))
        k = lambda name: os.path.join(self.keys, name)  # noqa: E731
        self.broker_flags = ["--curve-secret", k("broker.key_secret"), "--agent-keys", k("agents"),
                             "--collector-keys", k("collectors"), "--analyzer-keys", k("analyzers")]
        self.worker_flags = {role: ["--curve-secret", k(f"{key}.key_secret"), "--broker-key", k("broker.key")]
                             for role, key in (("collector", "c1"), ("analyzer", "a1"))}
        self.agent = {"curve_secret": k("agent1.key_secret"), "broker_key": k("broker.key")}

    def _start(self, name, argv):
        log = open(os.path.join(self.dir, name + ".log"), "ab")
        p = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT)
        log.close()
        self.procs.append(p)
        return p

    def start_broker(self):
        ends = os.path.join(self.dir, "endpoints")
        if os.path.exists(ends):
            os.unlink(ends)
        self.broker = self._start("broker", [str(BUILD / "broker/profeed-broker"), "--agents", self.agents,
                                             "--workers", self.workers, "--endpoints-file", ends] + HB
                                  + self.broker_flags)
        self.broker_started = time.monotonic()
        for _ in range(200):
            if os.path.exists(ends) and os.path.getsize(ends) > 0:
                return
            time.sleep(0.05)
        raise RuntimeError("the broker did not start: " + self.log("broker"))

    def start_workers(self):
        self._start("collector", [str(BUILD / "collector/profeed-collector"), "--broker", self.workers,
                                  "--worker-id", "py-c1", "--replay", self.replay_map,
                                  "--pass-delay-ms", "300"] + HB + self.worker_flags.get("collector", []))
        self._start("analyzer", [str(BUILD / "analyzer/profeed-analyzer"), "--broker", self.workers,
                                 "--worker-id", "py-a1"] + HB + self.worker_flags.get("analyzer", []))

    def wait_workers(self, n=2):
        with profeed.Farm(self.agents, **self.agent) as farm:
            for _ in range(100):
                if len(farm.status().get("workers", [])) >= n:
                    return
                time.sleep(0.1)
        raise RuntimeError("workers did not register: " + self.log("collector") + self.log("analyzer"))

    def log(self, name):
        try:
            with open(os.path.join(self.dir, name + ".log"), errors="replace") as f:
                return f.read()[-3000:]
        except OSError:
            return ""

    def stop(self):
        for p in self.procs:
            if p.poll() is None:
                p.terminate()
        for p in self.procs:
            try:
                p.wait(timeout=3)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
        shutil.rmtree(self.dir, ignore_errors=True)


def _farm(curve):
    f = FarmProcs(curve)
    try:
        f.start_broker()
        f.start_workers()
        f.wait_workers()
        yield f
    finally:
        f.stop()


@pytest.fixture
def farm_procs():
    yield from _farm(False)


@pytest.fixture
def curve_farm():
    yield from _farm(True)


def test_curve_the_agent_with_its_key_is_served_a_stranger_is_not(curve_farm):
    with profeed.Farm(curve_farm.agents, **curve_farm.agent) as farm:
        fb = farm.submit(["raw"], wait_s=30)
    assert fb.status == "ok", fb
    stranger = {"curve_secret": os.path.join(curve_farm.keys, "stranger.key_secret"),
                "broker_key": os.path.join(curve_farm.keys, "broker.key")}
    with profeed.Farm(curve_farm.agents, connect_timeout_s=1, **stranger) as farm:
        with pytest.raises(profeed.Unavailable, match="no answer from the broker"):
            farm.submit(["raw"], wait_s=5)
    with pytest.raises(profeed.BadInput, match="holds no secret key"):
        profeed.Farm(curve_farm.agents, curve_secret=os.path.join(curve_farm.keys, "agent1.key"),
                     broker_key=stranger["broker_key"])


def test_command_job_returns_its_feedback_with_progress(farm_procs):
    seen = []
    with profeed.Farm(farm_procs.agents, heartbeat_ms=200) as farm:
        fb = farm.submit(["kernels"], language="cuda", gpu_arch="sm_90", job_id="py-kernels",
                         progress=lambda *a: seen.append(a), wait_s=30)
    assert fb.job_id == "py-kernels" and fb.status == "ok", fb
    assert fb.json and fb.json["kernels"], fb.json
    assert "replayed" in fb.text or "replay" in fb.text, fb.text[:400]
    assert any(s[1] == "queued" for s in seen), seen
    assert all(s[0] == "py-kernels" for s in seen)


def test_the_request_is_the_one_profeed_submit_sends(farm_procs):
    """The broker compares a resubmitted job id's request byte for byte: the
    C client's resubmission of the Python client's job gets its feedback."""
    with profeed.Farm(farm_procs.agents) as farm:
        fb = farm.submit(["full"], language="cuda", gpu_arch="sm_90", job_id="py-same", wait_s=30)
    assert fb.status == "ok"
    cli = subprocess.run([str(BUILD / "client/profeed"), "submit", "--endpoint", farm_procs.agents,
                          "--language", "cuda", "--arch", "sm_90", "--job-id", "py-same", "--wait-s", "20", "--",
                          "full"], capture_output=True, text=True, timeout=30)
    assert cli.returncode == 0, cli.stderr
    assert cli.stdout.rstrip("\n") == fb.text.rstrip("\n")


def test_a_baseline_job_gives_the_change_since_it(farm_procs):
    # raw and full are the same nine H200 kernels captured under two plans.
    with profeed.Farm(farm_procs.agents) as farm:
        first = farm.submit(["raw"], job_id="py-round1", agent_id="py-loop", wait_s=30)
        second = farm.submit(["full"], job_id="py-round2", agent_id="py-loop", baseline_job="py-round1", wait_s=30)
        stranger = farm.submit(["full"], agent_id="py-other", baseline_job="py-round1", wait_s=30)
    assert first.status == "ok" and "Change since" not in first.text
    assert "Change since baseline job py-round1: " in second.text, second.text[:600]
    comparison = second.json["comparison"]
    assert comparison["problem"] is None and len(comparison["kernels"]) == len(second.json["kernels"]), comparison
    assert second.json["manifest"]["plan"] == "default", second.json["manifest"]
    assert stranger.status == "ok" and "is not this agent's" in stranger.text, stranger.text[:600]
    with pytest.raises(profeed.BadInput, match="baseline_job"):
        with profeed.Farm(farm_procs.agents) as farm:
            farm.submit(["raw"], baseline_job="no spaces", wait_s=5)


def test_feedback_shape_is_asked_for(farm_procs):
    with profeed.Farm(farm_procs.agents) as farm:
        md = farm.submit(["full"], fmt="markdown", top=1, wait_s=30)
        short = farm.submit(["full"], max_chars=400, wait_s=30)
        with pytest.raises(profeed.BadInput, match="never cut"):
            farm.submit(["full"], fmt="json", max_chars=400)
    assert md.status == "ok" and md.text.startswith("#"), md.text[:200]
    assert len(md.json["kernels"]) >= 1
    assert short.status == "ok" and len(short.text) <= 400, len(short.text)


def test_a_source_pass_is_asked_for(farm_procs):
    """The replay map's corpus_v2 records a source pass, served only to jobs
    that ask for one, as a real collector runs it only then."""
    with profeed.Farm(farm_procs.agents) as farm:
        plain = farm.submit(["corpus_v2"], wait_s=30)
        lined = farm.submit(["corpus_v2"], source=True, max_tokens=3000, wait_s=30)
    assert plain.status == "ok" and "Where:" not in plain.text
    assert lined.status == "ok" and "Where: line " in lined.text, lined.text[:2000]
    found = [f for k in lined.json["kernels"] for f in k["findings"] if f.get("lines")]
    assert found and found[0]["lines"][0]["line"] > 0, lined.json["kernels"][0]


def test_a_profiler_error_is_feedback_not_an_exception(farm_procs):
    fb = profeed.farm.submit(farm_procs.agents, ["crash"], language="cuda", wait_s=30)
    assert fb.status == "profiler_error", fb
    with pytest.raises(profeed.JobFailed, match="profiler_error"):
        fb.raise_for_status()


def test_kernel_job_is_well_formed_and_answered(farm_procs, tmp_path):
    # The replay collector runs no kernels: it answers the job as bad input,
    # which proves the broker took the request as valid and routed it.
    with profeed.Farm(farm_procs.agents) as farm:
        fb = farm.submit(kernel=("k.py", "def kernel_function(): pass\n"),
                         problem=FIXTURES / "wrapper/vector_add_problem.py", language="pytorch",
                         launch_skip=3, launch_count=20, round=2, plan="core", wait_s=30)
    assert fb.status == "bad_input", fb


def test_status(farm_procs):
    with profeed.Farm(farm_procs.agents) as farm:
        st = farm.status()
    roles = sorted(w["worker"]["role"] for w in st["workers"])
    assert roles == ["WORKER_ROLE_ANALYZER", "WORKER_ROLE_COLLECTOR"], st


def test_asyncio_jobs_run_at_once(farm_procs):
    farm = profeed.Farm(farm_procs.agents)

    async def both():
        return await asyncio.gather(farm.submit_async(["raw"], wait_s=30), farm.submit_async(["full"], wait_s=30))

    a, b = asyncio.run(both())
    farm.close()
    assert a.status == "ok" and b.status == "ok"
    assert a.job_id != b.job_id and a.text != b.text


def test_no_capable_worker_is_refused(farm_procs):
    # A broker just started queues jobs no registered collector can run
    # while its workers may still come back (interval x (liveness + 32) + 1 s:
    # 8 s with HB); after that it refuses them at once.
    time.sleep(max(0.0, farm_procs.broker_started + 0.2 * (3 + 32) + 1.5 - time.monotonic()))
    with profeed.Farm(farm_procs.agents) as farm, pytest.raises(profeed.Refused, match="NO_CAPABLE_WORKER"):
        farm.submit(["kernels"], language="sycl", gpu_arch="bmg", profiler="unitrace", wait_s=10)


def test_broker_killed_mid_job_and_restarted_the_job_completes(farm_procs):
    result = {}
    states = []

    def run():
        try:
            with profeed.Farm(farm_procs.agents, heartbeat_ms=200) as farm:
                result["fb"] = farm.submit(["kernels"], job_id="py-kill9", wait_s=40,
                                           progress=lambda *a: states.append(a[1]))
        except Exception as e:  # reported below
            result["error"] = e

    t = threading.Thread(target=run)
    t.start()
    for _ in range(100):
        if "collecting" in states or any(s for s in states if s != "queued"):
            break
        time.sleep(0.05)
    farm_procs.broker.send_signal(signal.SIGKILL)
    farm_procs.broker.wait()
    time.sleep(0.5)
    farm_procs.start_broker()
    t.join(60)
    assert not t.is_alive(), "the wait did not end"
    assert "error" not in result, result.get("error")
    assert result["fb"].status == "ok", result["fb"]


def test_broker_killed_for_good_ends_the_wait_with_farm_timeout(farm_procs):
    farm_procs.broker.send_signal(signal.SIGKILL)
    farm_procs.broker.wait()
    t0 = time.monotonic()
    with profeed.Farm(farm_procs.agents, heartbeat_ms=200, connect_timeout_s=1) as farm:
        with pytest.raises(profeed.Unavailable, match="no answer from the broker"):
            farm.submit(["kernels"], wait_s=3)
    assert time.monotonic() - t0 < 5


def test_broker_dies_after_accepting_ends_with_farm_timeout(farm_procs):
    result = {}

    def run():
        try:
            with profeed.Farm(farm_procs.agents, heartbeat_ms=200) as farm:
                farm.submit(["kernels"], wait_s=4, progress=lambda *a: result.setdefault("accepted", True))
        except Exception as e:
            result["error"] = e

    t = threading.Thread(target=run)
    t.start()
    for _ in range(100):
        if result.get("accepted"):
            break
        time.sleep(0.05)
    farm_procs.broker.send_signal(signal.SIGKILL)
    t.join(10)
    assert not t.is_alive()
    assert isinstance(result.get("error"), profeed.FarmTimeout), result
    assert "no feedback for job" in str(result["error"])


def test_unreachable_endpoint_raises_unavailable_quickly(tmp_path):
    t0 = time.monotonic()
    with profeed.Farm(f"ipc://{tmp_path}/nobody", connect_timeout_s=1) as farm:
        with pytest.raises(profeed.Unavailable, match="is it running"):
            farm.submit(["kernels"], wait_s=30)
        with pytest.raises(profeed.Unavailable):
            farm.status(timeout_s=0.5)
    assert time.monotonic() - t0 < 4


@pytest.mark.parametrize("kwargs,match", [
    (dict(argv=["x"], language="fortran"), "unknown language"),
    (dict(argv=["x"], profiler="rocprof"), "unknown profiler"),
    (dict(argv="x"), "argv"),
    (dict(), "a command"),
    (dict(argv=["x"], job_id="../etc"), "job_id"),
    (dict(argv=["x"], timeout_s=0), "timeout_s"),
    (dict(kernel=("k.py", "")), "problem"),
])
def test_bad_requests_raise_bad_input(tmp_path, kwargs, match):
    with profeed.Farm(f"ipc://{tmp_path}/nobody") as farm, pytest.raises(profeed.BadInput, match=match):
        farm.submit(**kwargs)


def test_plaintext_off_this_machine_needs_insecure():
    with pytest.raises(profeed.BadInput, match="leaves this machine"):
        profeed.Farm("tcp://192.0.2.1:5555")
    profeed.Farm("tcp://192.0.2.1:5555", insecure=True).close()
