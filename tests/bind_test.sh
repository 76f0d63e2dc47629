#!/usr/bin/env bash
# The broker's bind retry (issue 13, broker/bind_retry.h): started on a TCP
# port another process holds,
#  1. it waits, saying who holds the port, and comes up once the port is freed
#     inside its bind-retry-ms window (the holder is stopped as soon as the
#     broker has logged its first failed try: no race with the window);
#  2. held past a short window by a socket connected to itself (the TCP
#     simultaneous open a reconnecting client can fall into), it exits
#     non-zero naming the endpoint and the holder's pid.
#
#   tests/bind_test.sh BUILD_DIR
set -u
build=$1
. "$(dirname "$0")/farm_lib.sh"
farm_scratch bind
hb=()
farm_ports bind 3
busy=${ports[0]}
agents=tcp://127.0.0.1:$busy workers=tcp://127.0.0.1:${ports[1]}

# hold MODE: a python3 that binds 127.0.0.1:$busy and listens (listen) or
# connects to its own address (self), until killed; sets holder.
hold() {
  rm -f "$dir/held"
  python3 -c '
import socket, sys, time
mode, port, ready = sys.argv[1], int(sys.argv[2]), sys.argv[3]
s = socket.socket()
s.bind(("127.0.0.1", port))
if mode == "listen":
    s.listen(1)
else:
    s.connect(("127.0.0.1", port))
open(ready, "w").write("held\n")
time.sleep(600)
' "$1" "$busy" "$dir/held" >>"$dir/holder.log" 2>&1 &
  holder=$!
  pids+=("$holder")
  for _ in $(seq 200); do [ -s "$dir/held" ] && return 0; kill -0 "$holder" 2>/dev/null || break; sleep 0.05; done
  farm_die "the holder ($1) did not take port $busy"
}
# log_has PATTERN: until the broker's log has it, or the broker is gone.
log_has() {
  for _ in $(seq 600); do
    grep -q "$1" "$dir/broker.log" && return 0
    kill -0 "$broker_pid" 2>/dev/null || { grep -q "$1" "$dir/broker.log"; return; }
    sleep 0.05
  done
  return 1
}

# 1. Freed inside the window.
hold listen
# The window from the environment here, from the flag in 2.
PROFEED_BROKER_BIND_RETRY_MS=60000 "$build/broker/profeed-broker" --agents "$agents" --workers "$workers" \
  --endpoints-file "$dir/endpoints" >>"$dir/broker.log" 2>&1 &
broker_pid=$!
pids+=("$broker_pid")
check "a broker on a busy port says so, naming the endpoint and the holder, and keeps trying" \
  log_has "the agent endpoint $agents is in use (held by pid $holder (python[^)]*)); trying again"
kill -KILL "$holder"
wait "$holder" 2>/dev/null
for _ in $(seq 400); do [ -s "$dir/endpoints" ] && break; kill -0 "$broker_pid" 2>/dev/null || break; sleep 0.05; done
check "once the port is freed inside bind-retry-ms, the broker comes up on it" \
  bash -c "grep -qx 'agent=$agents' '$dir/endpoints' 2>/dev/null && grep -q 'is free again: bound' '$dir/broker.log'"
check "... and serves" bash -c "'$build/client/profeed' status --endpoint '$agents' --wait-ms 5000 >/dev/null"
kill -TERM "$broker_pid" 2>/dev/null
wait "$broker_pid"
check "... and stops cleanly" [ $? -eq 0 ]

# 2. Held past a short window, by a socket connected to itself.
: >"$dir/broker.log"
hold self
"$build/broker/profeed-broker" --agents "$agents" --workers "$workers" --bind-retry-ms 300 \
  >>"$dir/broker.log" 2>&1 &
broker_pid=$!
pids+=("$broker_pid")
for _ in $(seq 400); do kill -0 "$broker_pid" 2>/dev/null || break; sleep 0.05; done
kill -0 "$broker_pid" 2>/dev/null && farm_die "the broker still runs 20 s after a 300 ms bind-retry-ms"
wait "$broker_pid"
rc=$?
check "held past bind-retry-ms, the broker exits non-zero" [ "$rc" -ne 0 ]
check "... naming the endpoint, the error and the holder" \
  grep -q "cannot bind the agent endpoint $agents: Address already in use after 300 ms of retries (bind-retry-ms); held by pid $holder (python" \
  "$dir/broker.log"
exit "$fail"
