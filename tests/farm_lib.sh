# Shared by the farm's shell tests (farm, netns, fault, durable, curve and
# sandbox tests); sourced. The sourcing script sets `build` and `hb` (heartbeat
# flags), makes `dir` with farm_scratch, and keeps
# the pids of the processes it starts in `pids`; `fail` becomes 1 on a failed
# check.
pids=()
fail=0

# Makes the script's scratch folder, $dir (its logs are $dir/*.log), and has
# farm_cleanup run when the script ends. A script with more to undo sets its
# own EXIT trap and calls farm_cleanup from it.
farm_scratch() { # farm_scratch NAME
  dir=$(mktemp -d "${TMPDIR:-/tmp}/profeed-$1.XXXXXX")
  trap farm_cleanup EXIT
}
farm_cleanup() {
  farm_stop_and_report
  rm -rf "$dir"
}
# farm_scratch_kept NAME: farm_scratch, but a test that failed keeps its folder
# (logs, journal) for the post-mortem; its path is printed.
farm_scratch_kept() { # farm_scratch_kept NAME
  farm_scratch "$1"
  trap farm_cleanup_kept EXIT
}
farm_cleanup_kept() {
  farm_stop_and_report
  if [ "$fail" -eq 0 ]; then rm -rf "$dir"; else echo "# kept for the post-mortem: $dir"; fi
}

# Stops every process started (TERM, then KILL), prints sanitizer reports of
# the processes (ctest's regex fails the test on them), and the logs' tails
# when a check failed.
farm_stop_and_report() {
  for pid in "${pids[@]}"; do kill -TERM "$pid" 2>/dev/null; done
  sleep 0.3
  for pid in "${pids[@]}"; do kill -KILL "$pid" 2>/dev/null; wait "$pid" 2>/dev/null; done
  grep -h "Sanitizer" "$dir"/*.log 2>/dev/null
  if [ "$fail" -ne 0 ]; then
    for f in "$dir"/*.log; do echo "----- $f"; tail -40 "$f"; done
  fi
}

# Takes N TCP ports on 127.0.0.1 for this test and sets `ports` to them.
# They come from below the kernel's ephemeral range
# (/proc/sys/net/ipv4/ip_local_port_range), or above it when there is no room
# below: a client's local port is taken from that range, and a client that
# dials a port of it while the broker is down can be given that very port as
# its own and connect to itself (TCP simultaneous open), holding the port
# against the broker's restart. The search starts at a base derived from
# NAME and skips a port that any socket in /proc/net/tcp* uses, or that
# another run holds: each port taken is locked (flock) on a file in
# $PROFEED_PORT_LOCKS (/tmp/profeed-ports) for as long as this script and the
# processes it starts live, so parallel ctest runs, from this build folder or
# another checkout's, never share one.
farm_ports() { # farm_ports NAME N
  local name=$1 want=$2 low high first last
  read -r low high </proc/sys/net/ipv4/ip_local_port_range
  if [ "$low" -gt 11024 ]; then
    first=$((low - 10000)) last=$((low - 1))
  elif [ "$high" -lt 55535 ]; then
    first=$((high + 1)) last=$((high + 10000))
  else
    farm_die "no room for test ports outside the ephemeral range $low-$high (ip_local_port_range)"
  fi
  local locks=${PROFEED_PORT_LOCKS:-/tmp/profeed-ports}
  # Shared by every user's test runs, like /tmp itself.
  [ -d "$locks" ] || { mkdir -p "$locks" && chmod 1777 "$locks"; } 2>/dev/null ||
    [ -d "$locks" ] || farm_die "cannot make the port lock folder $locks"
  local span=$((last - first + 1))
  local base=$(($(printf '%s' "$name" | cksum | cut -d' ' -f1) % span))
  local used
  used=$(awk 'FNR > 1 { split($2, a, ":"); print a[2] }' /proc/net/tcp /proc/net/tcp6 2>/dev/null | sort -u)
  ports=()
  local i port hex fd
  for ((i = 0; i < span && ${#ports[@]} < want; i++)); do
    port=$((first + (base + i) % span))
    printf -v hex '%04X' "$port"
    grep -qx "$hex" <<<"$used" && continue
    { exec {fd}>>"$locks/$port"; } 2>/dev/null || continue # another user's lock file
    if flock -n "$fd"; then
      ports+=("$port")
    else
      exec {fd}>&-
    fi
  done
  [ "${#ports[@]}" -eq "$want" ] || farm_die "found only ${#ports[@]} of $want free ports in $first-$last"
}

# Ends the script at once as failed, saying why; the EXIT trap stops the
# processes and prints the logs' tails.
farm_die() { # farm_die MESSAGE
  echo "FAIL - $1"
  fail=1
  exit 1
}

# Starts profeed-broker from $build on AGENT_EP and WORKER_EP (ports from
# farm_ports: a restart passes the same ones) with the script's heartbeat
# flags ${hb[@]} and FLAGS, logging to $dir/broker.log; waits for its
# endpoints file and sets broker_pid, agent_ep and worker_ep. A broker that
# exits instead of coming up, or is not up within 60 s, ends the test at once
# (farm_die) with its log: nothing after it could pass.
farm_broker() { # farm_broker AGENT_EP WORKER_EP [FLAGS...]
  local agents=$1 workers=$2
  shift 2
  [ -n "$agents" ] && [ -n "$workers" ] || farm_die "farm_broker: no endpoints given (agents '$agents', workers '$workers')"
  rm -f "$dir/endpoints"
  "$build/broker/profeed-broker" --agents "$agents" --workers "$workers" --endpoints-file "$dir/endpoints" \
    "${hb[@]}" "$@" >>"$dir/broker.log" 2>&1 &
  broker_pid=$!
  pids+=("$broker_pid")
  local i
  for ((i = 0; i < 1200; i++)); do
    [ -s "$dir/endpoints" ] && break
    kill -0 "$broker_pid" 2>/dev/null || break
    sleep 0.05
  done
  if ! [ -s "$dir/endpoints" ]; then
    kill -0 "$broker_pid" 2>/dev/null && farm_die "the broker on $agents and $workers is not up after 60 s"
    wait "$broker_pid"
    farm_die "the broker on $agents and $workers exited ($?) instead of coming up"
  fi
  agent_ep=$(sed -n 's/^agent=//p' "$dir/endpoints")
  worker_ep=$(sed -n 's/^worker=//p' "$dir/endpoints")
}

# Ends the test at once when the process PID (named NAME for the message) is
# gone: a watchdog for the parts a test keeps running while it waits.
farm_alive() { # farm_alive PID NAME
  kill -0 "$1" 2>/dev/null || farm_die "the $2 (pid $1) exited on its own"
}

check() { # check DESCRIPTION COMMAND...
  if "${@:2}"; then echo "ok   - $1"; else echo "FAIL - $1"; fail=1; fi
}
