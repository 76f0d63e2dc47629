#!/usr/bin/python3
"""Checks the broker's Prometheus endpoint: metrics_check.py HOST:PORT [NAME{LABELS}>=N ...]

Fetches /metrics, checks that it parses as Prometheus text (every sample line
is NAME[{labels}] VALUE, every family has HELP and TYPE, histograms are
cumulative), that each NAME{LABELS}>=N expectation holds, and that bad HTTP
gets the right answer: unknown path 404, POST 405, an oversized request 431, a
request with a NUL 400, a connection that never finishes its request 408
after the broker's 2 s limit; then that /metrics still answers. Exits 1 on a failure,
saying which."""
import re
import socket
import sys
import time

host, port = sys.argv[1].rsplit(":", 1)
port = int(port)
failed = False


def check(what, ok):
    global failed
    print(("ok   - " if ok else "FAIL - ") + what)
    failed |= not ok


def raw(request, timeout=5):
    with socket.create_connection((host, port), timeout=timeout) as s:
        s.sendall(request)
        chunks = []
        while True:
            try:
                b = s.recv(65536)
            except (ConnectionResetError, socket.timeout):
                break
            if not b:
                break
            chunks.append(b)
    return b"".join(chunks)


def status_of(reply):
    line = reply.split(b"\r\n", 1)[0]
    return int(line.split()[1]) if line.startswith(b"HTTP/1.1 ") else 0


def fetch():
    reply = raw(b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n")
    head, _, body = reply.partition(b"\r\n\r\n")
    return status_of(reply), head.decode(), body.decode()


# Opened first, so the other checks run while it idles.
idle = socket.create_connection((host, port), timeout=20)
idle.sendall(b"GET /metr")
idle_since = time.monotonic()

code, head, body = fetch()
check("GET /metrics: 200 with the Prometheus content type",
      code == 200 and "text/plain; version=0.0.4" in head)
length = re.search(r"Content-Length: (\d+)", head)
check("GET /metrics: Content-Length matches the body", length and int(length.group(1)) == len(body.encode()))

samples = {}
families = {}
types = {}
sample_re = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{[^}]*\})? (-?[0-9.e+]+|\+Inf|NaN)$')
bad_lines = []
for line in body.splitlines():
    if line.startswith("# HELP ") or line.startswith("# TYPE "):
        parts = line.split(" ", 3)
        families.setdefault(parts[2], set()).add(parts[1])
        if parts[1] == "TYPE":
            types[parts[2]] = parts[3]
        continue
    m = sample_re.match(line)
    if not m:
        bad_lines.append(line)
        continue
    samples[m.group(1) + (m.group(2) or "")] = float(m.group(3))
check("every line is a HELP, TYPE or sample line (%s)" % (bad_lines[:2] or "all"), not bad_lines)
check("every family has HELP and TYPE", all(v == {"HELP", "TYPE"} for v in families.values()))
for fam in [f for f, t in types.items() if t == "histogram"]:
    buckets = [v for k, v in samples.items() if k.startswith(fam + "_bucket")]
    check(fam + ": buckets are cumulative and end at _count",
          bool(buckets) and buckets == sorted(buckets) and buckets[-1] == samples.get(fam + "_count"))

for want in sys.argv[2:]:
    name, n = want.split(">=")
    check("%s >= %s (is %s)" % (name, n, samples.get(name)), samples.get(name, -1) >= float(n))

check("unknown path: 404", status_of(raw(b"GET /nope HTTP/1.1\r\n\r\n")) == 404)
check("POST: 405", status_of(raw(b"POST /metrics HTTP/1.1\r\nContent-Length: 0\r\n\r\n")) == 405)
check("oversized request: 431", status_of(raw(b"GET /metrics HTTP/1.1\r\nX: " + b"a" * 20000 + b"\r\n\r\n")) == 431)
check("request with a NUL: 400", status_of(raw(b"GET /\x00 HTTP/1.1\r\n\r\n")) == 400)
check("not HTTP at all: 400", status_of(raw(b"\x16\x03\x01 hello\r\n\r\n")) == 400)
check("/metrics still answers after the bad requests", fetch()[0] == 200)
# 2 s limit, checked on the broker's heartbeat tick (at most 1 s): the answer comes within 3 s.
try:
    reply = idle.recv(4096)
except socket.timeout:
    reply = b""
idle.close()
waited = time.monotonic() - idle_since
check("a request never finished: 408 after %.1f s" % waited, status_of(reply) == 408 and 1.5 < waited < 6)
sys.exit(1 if failed else 0)
