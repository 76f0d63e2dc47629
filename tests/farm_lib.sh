# Shared by the farm's shell tests (farm_test.sh, netns_test.sh); sourced.
# The sourcing script sets `dir` (its scratch folder, logs as *.log) and keeps
# the pids of the processes it starts in `pids`; `fail` becomes 1 on a failed
# check.
pids=()
fail=0

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

check() { # check DESCRIPTION COMMAND...
  if "${@:2}"; then echo "ok   - $1"; else echo "FAIL - $1"; fail=1; fi
}
