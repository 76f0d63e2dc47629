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

# Starts profeed-broker from $build on AGENT_EP and WORKER_EP (port * binds a
# free one; a restart passes the endpoints it had) with the script's
# heartbeat flags ${hb[@]} and FLAGS, logging to $dir/broker.log; waits for
# its endpoints file and sets broker_pid, agent_ep and worker_ep.
farm_broker() { # farm_broker AGENT_EP WORKER_EP [FLAGS...]
  local agents=$1 workers=$2
  shift 2
  rm -f "$dir/endpoints"
  "$build/broker/profeed-broker" --agents "$agents" --workers "$workers" --endpoints-file "$dir/endpoints" \
    "${hb[@]}" "$@" >>"$dir/broker.log" 2>&1 &
  broker_pid=$!
  pids+=("$broker_pid")
  for _ in $(seq 200); do [ -s "$dir/endpoints" ] && break; sleep 0.05; done
  agent_ep=$(sed -n 's/^agent=//p' "$dir/endpoints")
  worker_ep=$(sed -n 's/^worker=//p' "$dir/endpoints")
}

check() { # check DESCRIPTION COMMAND...
  if "${@:2}"; then echo "ok   - $1"; else echo "FAIL - $1"; fail=1; fi
}
