#!/usr/bin/python3
"""Checks the deployment files against what exists in this project (issue 8).

usage: deploy_check.py SOURCE_DIR BUILD_DIR

No Docker engine or Kubernetes cluster is here, so the container and
Kubernetes files are checked, not run:
  - every YAML file under deploy/ parses (Debian's python3-yaml; a missing
    module is a failure, not a skip);
  - every command they (and the Dockerfile and the systemd units) run names a
    real program, every flag is in that program's --help, every --config path
    is a sample config that `cmake --install` installs, every
    PROFEED_<PROGRAM>_<KEY> variable is a key of that program's sample config,
    every port is the broker's agent (5555), worker (5556) or metrics (9556) port, every
    endpoint goes to the right one, ConfigMaps equal the sample configs, the
    ConfigMaps and Secrets the pods mount exist, and the Dockerfile's runtime
    stage installs the packages of every library the programs link;
  - the systemd units, as `cmake --install` writes them, pass
    `systemd-analyze verify` (skipped, with a message, without systemd-analyze);
  - deploy/local-farm.sh start/status/stop runs a real replay farm on loopback,
    `profeed submit` against it succeeds, and nothing is left running.
"""
import glob
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time

failures = []


def fail(msg):
    failures.append(msg)
    print("FAIL: " + msg)


def ok(msg):
    print("ok: " + msg)


try:
    import yaml
except ImportError:
    print("FAIL: python3 cannot import yaml: install Debian's python3-yaml "
          "(deploy/install-deps.sh lists it); this test needs it and does not skip")
    sys.exit(1)

if len(sys.argv) != 3:
    print(__doc__)
    sys.exit(2)
src = os.path.abspath(sys.argv[1])
build = os.path.abspath(sys.argv[2])

PROGRAMS = {
    "profeed-broker": os.path.join(build, "broker", "profeed-broker"),
    "profeed-collector": os.path.join(build, "collector", "profeed-collector"),
    "profeed-analyzer": os.path.join(build, "analyzer", "profeed-analyzer"),
    "profeed": os.path.join(build, "client", "profeed"),
}
AGENT_PORT, WORKER_PORT, METRICS_PORT = 5555, 5556, 9556
PORTS = (AGENT_PORT, WORKER_PORT, METRICS_PORT)


def run(argv, **kw):
    return subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          text=True, **kw)


def flags_of(text):
    return set(re.findall(r"(--[a-z][a-z0-9-]*)", text))


# ---------------------------------------------------------------- the project
help_flags = {}
for name, path in PROGRAMS.items():
    if not os.access(path, os.X_OK):
        fail(f"{path} is not built")
        continue
    if name == "profeed":
        for sub in ("status", "submit"):
            help_flags[f"profeed {sub}"] = flags_of(run([path, sub, "--help"]).stdout)
    else:
        help_flags[name] = flags_of(run([path, "--help"]).stdout)


def cfg_keys(program):
    keys = set()
    with open(os.path.join(src, "deploy", "config", program + ".cfg")) as f:
        for line in f:
            m = re.match(r"^([A-Za-z0-9$_@.&+/-]+)\s*=", line)
            if m:
                keys.add(m.group(1))
    return keys


sample_cfgs = sorted(os.path.basename(p) for p in glob.glob(os.path.join(src, "deploy/config/*.cfg")))
keys = {p: cfg_keys(p) for p in ("profeed-broker", "profeed-collector", "profeed-analyzer")}
# The sample broker config's own ports are the ones the deployment files use.
for k, port in (("agents", AGENT_PORT), ("workers", WORKER_PORT)):
    with open(os.path.join(src, "deploy/config/profeed-broker.cfg")) as f:
        if not re.search(rf'^{k} = "tcp://[^"]*:{port}"', f.read(), re.M):
            fail(f"deploy/config/profeed-broker.cfg's {k} is not port {port}")

# What `cmake --install` writes (DESTDIR into a temporary folder).
stage = tempfile.mkdtemp(prefix="profeed-deploy-check.")
r = run(["cmake", "--install", build], env=dict(os.environ, DESTDIR=stage))
if r.returncode != 0:
    fail("cmake --install failed:\n" + r.stdout)
installed = set()
for root, _, files in os.walk(stage):
    for fn in files:
        installed.add("/" + os.path.relpath(os.path.join(root, fn), stage))
installed_cfgs = {p for p in installed if re.search(r"/etc/profeed/[^/]+\.cfg$", p)}
if sorted(os.path.basename(p) for p in installed_cfgs) != sample_cfgs:
    fail(f"cmake --install writes configs {sorted(installed_cfgs)}, not the samples {sample_cfgs}")
else:
    ok(f"cmake --install writes the sample configs: {sorted(installed_cfgs)}")
units = sorted(p for p in installed if "/lib/systemd/system/" in p)
want_units = ["profeed-analyzer.service", "profeed-broker.service", "profeed-collector@.service"]
if sorted(os.path.basename(u) for u in units) != want_units:
    fail(f"cmake --install writes units {units}, not {want_units}")
else:
    ok(f"cmake --install writes the systemd units: {units}")


# ------------------------------------------------------------------ commands
def check_endpoint(where, value, port):
    for m in re.finditer(r"tcp://[^:\s\"']+:(\d+|\*)", value):
        if m.group(1) != str(port):
            fail(f"{where}: endpoint {m.group(0)} should use port {port}")


def check_env(where, program, name, value):
    prefix = "PROFEED_" + program.split("-", 1)[1].upper() + "_"
    if name == "CUDA_VISIBLE_DEVICES":
        return
    if not name.startswith(prefix):
        fail(f"{where}: variable {name} is not a {program} setting ({prefix}<KEY>)")
        return
    key = name[len(prefix):].lower().replace("_", "-")
    if key not in keys[program]:
        fail(f"{where}: {name} names key '{key}', which deploy/config/{program}.cfg does not have")
    if value is not None:
        if key == "broker":
            check_endpoint(where, value, WORKER_PORT)
        elif key == "agents":
            check_endpoint(where, value, AGENT_PORT)
        elif key == "workers":
            check_endpoint(where, value, WORKER_PORT)
        elif key == "metrics":
            check_endpoint(where, value, METRICS_PORT)


def check_command(where, argv, config_dir="/etc/profeed"):
    """argv: a command the file runs. Returns the program name or None."""
    if not argv:
        fail(f"{where}: empty command")
        return None
    prog = os.path.basename(argv[0])
    if prog not in PROGRAMS:
        fail(f"{where}: {argv[0]} is not one of the project's programs {sorted(PROGRAMS)}")
        return None
    args = argv[1:]
    hkey = prog
    if prog == "profeed":
        if not args or f"profeed {args[0]}" not in help_flags:
            fail(f"{where}: profeed {args[:1]} is not a profeed command used here")
            return None
        hkey = f"profeed {args[0]}"
        args = args[1:]
    for i, a in enumerate(args):
        if a.startswith("--"):
            flag = a.split("=", 1)[0]
            if flag not in help_flags.get(hkey, set()):
                fail(f"{where}: {flag} is not in `{hkey} --help`")
        prev = args[i - 1] if i else ""
        if prev == "--config":
            want = f"{config_dir}/{prog}.cfg"
            if a != want:
                fail(f"{where}: --config {a}, expected {want}")
            if os.path.basename(a) not in sample_cfgs:
                fail(f"{where}: --config {a} is not a sample config in deploy/config/")
        if prev in ("--agents", "--endpoint"):
            check_endpoint(where, a, AGENT_PORT)
        if prev in ("--workers", "--broker"):
            check_endpoint(where, a, WORKER_PORT)
        if prev == "--metrics":
            check_endpoint(where, a, METRICS_PORT)
    return prog


# -------------------------------------------------------------------- YAML
yaml_files = sorted(glob.glob(os.path.join(src, "deploy/**/*.yaml"), recursive=True) +
                    glob.glob(os.path.join(src, "deploy/**/*.yml"), recursive=True))
docs = {}
for p in yaml_files:
    rel = os.path.relpath(p, src)
    try:
        with open(p) as f:
            docs[rel] = [d for d in yaml.safe_load_all(f) if d is not None]
        ok(f"{rel} parses ({len(docs[rel])} document(s))")
    except yaml.YAMLError as e:
        fail(f"{rel} does not parse: {e}")
if "deploy/docker/compose.yaml" not in docs:
    fail("deploy/docker/compose.yaml is missing")

# ---- compose
compose = (docs.get("deploy/docker/compose.yaml") or [{}])[0]
for name, svc in (compose.get("services") or {}).items():
    where = f"compose.yaml service {name}"
    prog = check_command(where, svc.get("command") or [])
    for var, val in (svc.get("environment") or {}).items():
        if prog:
            check_env(where, prog, var, str(val))
    for port in svc.get("ports") or []:
        if int(str(port).split(":")[-1]) not in PORTS:
            fail(f"{where}: port {port} is not the agent, worker or metrics port")
    hc = (svc.get("healthcheck") or {}).get("test")
    if hc:
        check_command(where + " healthcheck", hc[1:] if hc[0] in ("CMD", "CMD-SHELL") else hc)
    b = svc.get("build") or {}
    if b:
        ctx = os.path.normpath(os.path.join(src, "deploy/docker", b.get("context", ".")))
        if not os.path.isfile(os.path.join(ctx, b.get("dockerfile", "Dockerfile"))):
            fail(f"{where}: build file {b.get('dockerfile')} not in context {ctx}")
    for s in svc.get("secrets") or []:
        if s not in (compose.get("secrets") or {}):
            fail(f"{where}: secret {s} is not defined")
    if name == "collector":
        devs = (((svc.get("deploy") or {}).get("resources") or {}).get("reservations") or {}).get("devices") or []
        if not any(d.get("driver") == "nvidia" and "gpu" in (d.get("capabilities") or []) for d in devs):
            fail(f"{where}: no nvidia GPU reservation")
for s, spec in (compose.get("secrets") or {}).items():
    if not os.path.isfile(os.path.join(src, "deploy/docker", spec.get("file", ""))):
        fail(f"compose.yaml secret {s}: file {spec.get('file')} does not exist")
ok("compose.yaml checked")

# ---- Kubernetes
k8s = [(rel, d) for rel, ds in docs.items() if rel.startswith("deploy/k8s/") for d in ds]
by_kind = {}
for rel, d in k8s:
    for field in ("apiVersion", "kind", "metadata"):
        if field not in d:
            fail(f"{rel}: a document without {field}")
    by_kind.setdefault(d.get("kind"), {})[d.get("metadata", {}).get("name")] = d
for kind, name in (("Deployment", "profeed-broker"), ("Service", "profeed-broker"),
                   ("Deployment", "profeed-analyzer"), ("HorizontalPodAutoscaler", "profeed-analyzer"),
                   ("DaemonSet", "profeed-collector"), ("Secret", "profeed-curve-keys")):
    if name not in by_kind.get(kind, {}):
        fail(f"deploy/k8s: no {kind} {name}")
for prog in ("profeed-broker", "profeed-collector", "profeed-analyzer"):
    cm = by_kind.get("ConfigMap", {}).get(f"{prog.split('-', 1)[1].join(['profeed-', '-config'])}")
    with open(os.path.join(src, "deploy/config", prog + ".cfg")) as f:
        sample = f.read()
    if not cm or (cm.get("data") or {}).get(prog + ".cfg") != sample:
        fail(f"deploy/k8s: ConfigMap profeed-{prog.split('-', 1)[1]}-config does not hold "
             f"deploy/config/{prog}.cfg verbatim")
svc_ports = {p["port"] for p in by_kind.get("Service", {}).get("profeed-broker", {}).get("spec", {}).get("ports", [])}
if svc_ports != set(PORTS):
    fail(f"deploy/k8s: Service profeed-broker ports {svc_ports}")
hpa = by_kind.get("HorizontalPodAutoscaler", {}).get("profeed-analyzer", {})
if hpa.get("spec", {}).get("scaleTargetRef", {}).get("name") not in by_kind.get("Deployment", {}):
    fail("deploy/k8s: the HPA scales a Deployment that does not exist")
for kind in ("Deployment", "DaemonSet"):
    for wname, w in by_kind.get(kind, {}).items():
        pod = w["spec"]["template"]["spec"]
        vols = {v["name"]: v for v in pod.get("volumes", [])}
        for v in vols.values():
            if "configMap" in v and v["configMap"]["name"] not in by_kind.get("ConfigMap", {}):
                fail(f"{kind} {wname}: ConfigMap {v['configMap']['name']} does not exist")
            if "secret" in v and v["secret"]["secretName"] not in by_kind.get("Secret", {}):
                fail(f"{kind} {wname}: Secret {v['secret']['secretName']} does not exist")
        for c in pod["containers"]:
            where = f"{kind} {wname} container {c['name']}"
            prog = check_command(where, c.get("command", []))
            for e in c.get("env", []):
                if prog:
                    check_env(where, prog, e["name"], e.get("value"))
            for p in c.get("ports", []):
                if p["containerPort"] not in PORTS:
                    fail(f"{where}: containerPort {p['containerPort']}")
            for probe in ("readinessProbe", "livenessProbe"):
                cmd = (c.get(probe) or {}).get("exec", {}).get("command")
                if not cmd or cmd[:2] != ["profeed", "status"] or "--endpoint" not in cmd:
                    fail(f"{where}: {probe} is not an exec of `profeed status --endpoint ...`")
                else:
                    check_command(f"{where} {probe}", cmd)
            for m in c.get("volumeMounts", []):
                if m["name"] not in vols:
                    fail(f"{where}: mounts undefined volume {m['name']}")
                sp = m.get("subPath")
                if sp:
                    cmname = vols[m["name"]].get("configMap", {}).get("name")
                    if sp not in (by_kind.get("ConfigMap", {}).get(cmname, {}).get("data") or {}):
                        fail(f"{where}: subPath {sp} is not in ConfigMap {cmname}")
                    if m["mountPath"] != f"/etc/profeed/{sp}":
                        fail(f"{where}: config mounted at {m['mountPath']}, not /etc/profeed/{sp}")
        if kind == "DaemonSet":
            if not pod.get("nodeSelector"):
                fail(f"DaemonSet {wname}: no nodeSelector for GPU nodes")
            if not any("nvidia.com/gpu" in (c.get("resources", {}).get("limits") or {}) for c in pod["containers"]):
                fail(f"DaemonSet {wname}: no nvidia.com/gpu limit")
ok(f"deploy/k8s checked ({len(k8s)} documents)")

# ---- Dockerfile
dockerfile = os.path.join(src, "deploy/docker/Dockerfile")
with open(dockerfile) as f:
    dtext = f.read().replace("\\\n", " ")
lines = [l.strip() for l in dtext.splitlines() if l.strip() and not l.strip().startswith("#")]
froms = [l for l in lines if l.upper().startswith("FROM ")]
if len(froms) < 2 or not all(re.match(r"FROM debian:12", l) for l in froms):
    fail(f"Dockerfile: want a multi-stage build on debian:12, found {froms}")
if not any("deploy/install-deps.sh" in l and l.startswith("RUN") for l in lines):
    fail("Dockerfile: the build stage does not run deploy/install-deps.sh")
bin_names = {os.path.basename(p) for p in installed if re.search(r"/bin/[^/]+$", p)}
for l in lines:
    if l.startswith("COPY --from=build"):
        for p in shlex.split(l)[2:-1]:
            if p.startswith("/src/"):
                if not os.path.exists(os.path.join(src, p[len("/src/"):])):
                    fail(f"Dockerfile: {p} is not in the repository")
            elif "/bin/" in p and os.path.basename(p) not in bin_names:
                fail(f"Dockerfile: {p} is not a program cmake --install writes ({sorted(bin_names)})")
    elif l.startswith("COPY ") and not l.startswith("COPY . "):
        for p in shlex.split(l)[1:-1]:
            if not os.path.exists(os.path.join(src, p)):
                fail(f"Dockerfile: COPY {p}: not in the repository")
    elif l.startswith("CMD "):
        import json
        check_command("Dockerfile CMD", json.loads(l[4:]))
    elif l.startswith("EXPOSE "):
        if {int(x) for x in l.split()[1:]} != {AGENT_PORT, WORKER_PORT}:
            fail(f"Dockerfile: {l}")
# Every library the programs link comes from a package the runtime stage installs.
runtime_pkgs = set()
for l in lines:
    if "apt-get install" in l:
        runtime_pkgs |= {w for w in l.split("apt-get install", 1)[1].split("&&")[0].split()
                         if not w.startswith("-")}
# libc6 and what it depends on (libgcc-s1, which a clang sanitizer build
# links) are in every Debian image the runtime stage starts from.
base_pkgs = {"libc6"} | {d.split()[0].split(":")[0]
                         for d in run(["dpkg-query", "-W", "-f=${Depends}", "libc6"]).stdout.split(",")
                         if d.strip()}
needed_pkgs = set()
own = os.path.join(build, "client")
for path in PROGRAMS.values():
    needed = re.findall(r"NEEDED\s+(\S+)", run(["objdump", "-p", path]).stdout)
    for lib in needed:
        # The project's own library is copied; sanitizer runtimes are only in
        # sanitized test builds (the image builds Release).
        if lib.startswith("libprofeed") or re.match(r"lib(a|ub|l|t)san\.", lib):
            continue
        m = re.search(rf"{re.escape(lib)} => (\S+)", run(["ldd", path]).stdout)
        if not m:
            fail(f"ldd does not resolve {lib} of {path}")
            continue
        r = run(["dpkg", "-S", os.path.realpath(m.group(1))])
        if r.returncode != 0:
            r = run(["dpkg", "-S", m.group(1)])
        pkg = r.stdout.split(":")[0].strip() if r.returncode == 0 else None
        if pkg and pkg not in base_pkgs:
            needed_pkgs.add(pkg)
missing = needed_pkgs - runtime_pkgs
if missing:
    fail(f"Dockerfile: the runtime stage does not install {sorted(missing)}")
ok(f"Dockerfile checked (runtime packages {sorted(runtime_pkgs)} cover {sorted(needed_pkgs)})")

with open(os.path.join(src, "deploy/install-deps.sh")) as f:
    if "python3-yaml" not in f.read():
        fail("deploy/install-deps.sh does not install python3-yaml")

# ------------------------------------------------------------------ systemd
for u in units:
    with open(stage + u) as f:
        text = f.read()
    prog = None
    for line in text.splitlines():
        if line.startswith("ExecStart="):
            argv = shlex.split(line[len("ExecStart="):])
            if argv[0] not in installed:
                fail(f"{u}: ExecStart {argv[0]} is not installed by cmake --install")
            cfg = argv[argv.index("--config") + 1] if "--config" in argv else None
            if cfg not in installed_cfgs:
                fail(f"{u}: --config {cfg} is not a config cmake --install writes")
            prog = check_command(u, argv, config_dir=os.path.dirname(cfg or "/"))
        if line.startswith("Environment=") and prog is None:
            pass
    if "Restart=on-failure" not in text:
        fail(f"{u}: no Restart=on-failure")
    if not re.search(r"^(DynamicUser=yes|User=\S+)", text, re.M):
        fail(f"{u}: runs as root (no DynamicUser= or User=)")
    for m in re.finditer(r"^Environment=(\w+)=(\S*)", text, re.M):
        if prog:
            check_env(u, prog, m.group(1), m.group(2))
    if "collector" in u:
        for want in ("CUDA_VISIBLE_DEVICES=%i", "PrivateDevices=no", "DeviceAllow=/dev/nvidiactl"):
            if want not in text:
                fail(f"{u}: lacks {want}")
ok("systemd units checked")

sa = shutil.which("systemd-analyze")
if not sa:
    print("SKIP: systemd-analyze is not installed: the units were not verified with it")
else:
    # The installed units, pointed at the staged files, plus one collector instance.
    vdir = os.path.join(stage, "verify")
    os.mkdir(vdir)
    to_verify = []
    for u in units:
        with open(stage + u) as f:
            text = f.read()
        for p in sorted(installed, key=len, reverse=True):
            text = text.replace(" " + p, " " + stage + p).replace("=" + p, "=" + stage + p)
        name = os.path.basename(u).replace("@.service", "@0.service")
        with open(os.path.join(vdir, os.path.basename(u)), "w") as f:
            f.write(text)
        if name != os.path.basename(u):
            shutil.copy(os.path.join(vdir, os.path.basename(u)), os.path.join(vdir, name))
        to_verify.append(os.path.join(vdir, name))
    r = run([sa, "verify"] + to_verify, cwd=vdir)
    if r.returncode != 0 or r.stdout.strip():
        fail("systemd-analyze verify:\n" + r.stdout)
    else:
        ok("systemd-analyze verify passes: " + " ".join(os.path.basename(x) for x in to_verify))

# --------------------------------------------------------------- local farm
farm = os.path.join(src, "deploy/local-farm.sh")
rundir = tempfile.mkdtemp(prefix="profeed-local-farm.")
base = ["bash", farm]
opts = ["--build", build, "--dir", rundir]
env = dict(os.environ, PATH="/usr/sbin:/usr/bin:/sbin:/bin")  # no ncu: replay
pids = []
try:
    r = run(base + ["start", "--collectors", "2", "--analyzers", "2"] + opts, env=env, timeout=60)
    print(r.stdout)
    if r.returncode != 0:
        fail(f"local-farm.sh start exited {r.returncode}")
    for p in glob.glob(os.path.join(rundir, "*.pid")):
        with open(p) as f:
            pids.append(int(f.read()))
    if len(pids) != 5:
        fail(f"local-farm.sh start left {len(pids)} pid files, expected 5")
    r = run(base + ["status"] + opts, env=env, timeout=30)
    print(r.stdout)
    if r.returncode != 0 or r.stdout.count(" alive ") != 5 or "workers: 4" not in r.stdout:
        fail(f"local-farm.sh status exited {r.returncode} or did not list 5 live processes and 4 workers")
    with open(os.path.join(rundir, "endpoints")) as f:
        ep = re.search(r"^agent=(\S+)", f.read(), re.M).group(1)
    r = run([PROGRAMS["profeed"], "submit", "--endpoint", ep, "--language", "cuda", "--arch", "sm_90",
             "--wait-s", "60", "--", "kernels", "all"], timeout=90)
    if r.returncode != 0 or "status: ok" not in r.stdout:
        fail(f"profeed submit against the local farm exited {r.returncode}:\n{r.stdout[-2000:]}")
    else:
        ok("profeed submit against the local farm: " + r.stdout.splitlines()[0])
finally:
    r = run(base + ["stop"] + opts, env=env, timeout=60)
    print(r.stdout)
    if r.returncode != 0:
        fail(f"local-farm.sh stop exited {r.returncode}")
time.sleep(0.2)
left = [p for p in pids if os.path.exists(f"/proc/{p}") and
        open(f"/proc/{p}/stat").read().split(")")[-1].split()[0] != "Z"]
if left:
    fail(f"processes still running after stop: {left}")
    for p in left:
        os.kill(p, 9)
if glob.glob(os.path.join(rundir, "*.pid")):
    fail("pid files left after stop")
r = run(base + ["status"] + opts, env=env, timeout=30)
if r.returncode == 0:
    fail("local-farm.sh status after stop says a farm runs")
if not failures:
    ok("local-farm.sh start/status/stop: 5 processes up, a job answered, nothing left running")
    shutil.rmtree(rundir, ignore_errors=True)
else:
    print(f"(local farm logs kept in {rundir})")
shutil.rmtree(stage, ignore_errors=True)

if failures:
    print(f"\n{len(failures)} failure(s)")
    sys.exit(1)
print("\nall deployment checks passed")
