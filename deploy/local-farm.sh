#!/usr/bin/env bash
# A profeed farm on this machine: one profeed-broker on free loopback ports, N
# profeed-collectors and M profeed-analyzers, each its own background process
# with a pid file and a log file under RUNDIR.
#
#   deploy/local-farm.sh start  [--collectors N] [--analyzers M] [--build DIR] [--dir RUNDIR]
#   deploy/local-farm.sh status [--build DIR] [--dir RUNDIR]
#   deploy/local-farm.sh stop   [--dir RUNDIR]
#
# The collectors run Nsight Compute when `ncu` is on PATH and `nvidia-smi -L`
# lists a GPU; otherwise they replay the recorded H200 captures in
# tests/fixtures/replay/h200.map (and the feedback says so).
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)

usage() {
  cat <<EOF
usage: deploy/local-farm.sh start|stop|status [options]

  start    start a broker (free loopback ports), N collectors and M analyzers in
           the background; pid files and logs go to RUNDIR
  status   each process alive or not, then \`profeed status\` from the broker
  stop     stop them (SIGTERM, up to 5 s, then SIGKILL) and remove the pid files

options:
  --collectors N   collectors to start (default 1)
  --analyzers M    analyzers to start (default 1)
  --build DIR      the build folder with the programs (default build/ in the repo)
  --dir RUNDIR     pid files, logs and the broker's endpoints file
                   (default .farm/ in the repo)
  -h, --help       this text

Collectors replay tests/fixtures/replay/h200.map unless ncu and an NVIDIA GPU
are present. The agent endpoint is in RUNDIR/endpoints (agent=...); e.g.
  build/client/profeed submit --endpoint \$(sed -n 's/^agent=//p' .farm/endpoints) \\
      --language cuda --arch sm_90 -- kernels all
EOF
}

say() { printf 'local-farm: %s\n' "$*"; }
die() { printf 'local-farm: error: %s\n' "$*" >&2; exit 1; }

[ $# -ge 1 ] || { usage >&2; exit 2; }
cmd=$1
shift
case "$cmd" in
  start|stop|status) ;;
  -h|--help|help) usage; exit 0 ;;
  *) printf 'local-farm: unknown command "%s"\n\n' "$cmd" >&2; usage >&2; exit 2 ;;
esac

collectors=1
analyzers=1
build=$repo/build
rundir=$repo/.farm
while [ $# -gt 0 ]; do
  case "$1" in
    --collectors) [ $# -ge 2 ] || die "--collectors needs a number"; collectors=$2; shift 2 ;;
    --analyzers) [ $# -ge 2 ] || die "--analyzers needs a number"; analyzers=$2; shift 2 ;;
    --build) [ $# -ge 2 ] || die "--build needs a folder"; build=$2; shift 2 ;;
    --dir) [ $# -ge 2 ] || die "--dir needs a folder"; rundir=$2; shift 2 ;;
    -h|--help) usage; exit 0 ;;
    *) die "unknown option \"$1\" (see --help)" ;;
  esac
done
case "$collectors" in ''|*[!0-9]*) die "--collectors takes a whole number, not \"$collectors\"" ;; esac
case "$analyzers" in ''|*[!0-9]*) die "--analyzers takes a whole number, not \"$analyzers\"" ;; esac

broker_bin=$build/broker/profeed-broker
collector_bin=$build/collector/profeed-collector
analyzer_bin=$build/analyzer/profeed-analyzer
profeed_bin=$build/client/profeed

# The pid files of the farm, broker first.
pid_files() {
  local f
  [ -f "$rundir/broker.pid" ] && echo "$rundir/broker.pid"
  for f in "$rundir"/collector-*.pid "$rundir"/analyzer-*.pid; do
    [ -f "$f" ] && echo "$f"
  done
  return 0
}

# Alive and still one of ours (a stale pid file's pid may belong to another
# process by now).
alive() {
  kill -0 "$1" 2>/dev/null || return 1
  [ -r "/proc/$1/comm" ] || return 0
  grep -q '^profeed' "/proc/$1/comm"
}

agent_endpoint() { sed -n 's/^agent=//p' "$rundir/endpoints" 2>/dev/null || true; }

do_stop() {
  local files f pid name
  files=$(pid_files)
  if [ -z "$files" ]; then
    say "no farm is running in $rundir (no pid files)"
    return 0
  fi
  # Workers first, then the broker, so that they do not reconnect to nothing.
  local ordered
  ordered=$(printf '%s\n' "$files" | grep -v '/broker.pid$' || true)
  ordered=$(printf '%s\n%s\n' "$ordered" "$(printf '%s\n' "$files" | grep '/broker.pid$' || true)")
  local pids=()
  for f in $ordered; do
    pid=$(cat "$f" 2>/dev/null || true)
    name=$(basename "$f" .pid)
    if [ -n "$pid" ] && alive "$pid"; then
      kill -TERM "$pid" 2>/dev/null || true
      pids+=("$pid")
      say "sent SIGTERM to $name (pid $pid)"
    else
      say "$name (pid ${pid:-?}) was not running"
    fi
  done
  for _ in $(seq 50); do
    local left=0
    for pid in "${pids[@]}"; do alive "$pid" && left=1; done
    [ "$left" -eq 0 ] && break
    sleep 0.1
  done
  for pid in "${pids[@]}"; do
    if alive "$pid"; then
      say "pid $pid did not stop within 5 s: SIGKILL"
      kill -KILL "$pid" 2>/dev/null || true
    fi
  done
  for f in $files; do rm -f "$f"; done
  rm -f "$rundir/endpoints"
  say "stopped; logs kept in $rundir"
}

do_status() {
  local files f pid name ep down=0
  files=$(pid_files)
  if [ -z "$files" ]; then
    say "no farm is running in $rundir (no pid files)"
    return 3
  fi
  for f in $files; do
    pid=$(cat "$f" 2>/dev/null || true)
    name=$(basename "$f" .pid)
    if [ -n "$pid" ] && alive "$pid"; then
      printf '  %-16s pid %-8s alive    log %s\n' "$name" "$pid" "$rundir/$name.log"
    else
      printf '  %-16s pid %-8s NOT RUNNING (see %s)\n' "$name" "${pid:-?}" "$rundir/$name.log"
      down=1
    fi
  done
  ep=$(agent_endpoint)
  if [ -z "$ep" ]; then
    say "no agent endpoint in $rundir/endpoints"
    return 1
  fi
  [ -x "$profeed_bin" ] || die "$profeed_bin not found (build first, or pass --build DIR)"
  echo
  echo "\$ profeed status --endpoint $ep"
  "$profeed_bin" status --endpoint "$ep" || { say "the broker did not answer"; return 1; }
  return $down
}

# Waits until the broker lists n workers.
wait_workers() {
  local n=$1 ep got
  ep=$(agent_endpoint)
  for _ in $(seq 150); do
    got=$("$profeed_bin" status --endpoint "$ep" --json --wait-ms 500 2>/dev/null |
          grep -o '"worker_id"' | wc -l || true)
    [ "$got" -ge "$n" ] && return 0
    sleep 0.1
  done
  return 1
}

do_start() {
  local b
  for b in "$broker_bin" "$collector_bin" "$analyzer_bin" "$profeed_bin"; do
    [ -x "$b" ] || die "$b not found: build first (cmake -S . -B build && cmake --build build) or pass --build DIR"
  done
  mkdir -p "$rundir"
  rundir=$(cd "$rundir" && pwd)
  if [ -n "$(pid_files)" ]; then
    die "a farm already has pid files in $rundir: run \`$0 stop --dir $rundir\` first"
  fi
  rm -f "$rundir/endpoints"

  local collector_args=(--replay "$repo/tests/fixtures/replay/h200.map") backend=replay
  if command -v ncu >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1; then
    # Jobs run as this user: as root, run-as root says so (the collector
    # refuses root without it; docs/security.md).
    collector_args=(--run-as "$(id -un)")
    backend=ncu
  fi

  # On a failure part-way, stop what was started.
  trap 'say "start failed; stopping what was started"; do_stop >/dev/null 2>&1 || true' ERR

  # The journal keeps acknowledged jobs if the broker dies (docs/reliability.md).
  "$broker_bin" --agents 'tcp://127.0.0.1:*' --workers 'tcp://127.0.0.1:*' \
    --endpoints-file "$rundir/endpoints" --state-dir "$rundir/state" >"$rundir/broker.log" 2>&1 </dev/null &
  echo $! >"$rundir/broker.pid"
  for _ in $(seq 100); do [ -s "$rundir/endpoints" ] && break; sleep 0.05; done
  local agent_ep worker_ep
  agent_ep=$(agent_endpoint)
  worker_ep=$(sed -n 's/^worker=//p' "$rundir/endpoints" 2>/dev/null || true)
  if [ -z "$agent_ep" ] || [ -z "$worker_ep" ]; then
    do_stop >/dev/null 2>&1 || true
    die "profeed-broker did not start (see $rundir/broker.log)"
  fi
  say "profeed-broker    pid $(cat "$rundir/broker.pid"): agents $agent_ep, workers $worker_ep"

  local i
  for i in $(seq "$collectors"); do
    (cd "$rundir" && exec "$collector_bin" --broker "$worker_ep" --worker-id "local-collector-$i" \
       "${collector_args[@]}" >"$rundir/collector-$i.log" 2>&1 </dev/null) &
    echo $! >"$rundir/collector-$i.pid"
    say "profeed-collector pid $!: local-collector-$i, backend $backend"
  done
  for i in $(seq "$analyzers"); do
    "$analyzer_bin" --broker "$worker_ep" --worker-id "local-analyzer-$i" \
      >"$rundir/analyzer-$i.log" 2>&1 </dev/null &
    echo $! >"$rundir/analyzer-$i.pid"
    say "profeed-analyzer  pid $!: local-analyzer-$i"
  done
  trap - ERR
  if [ "$backend" = replay ]; then
    say "NO GPU PROFILING: ncu or an NVIDIA GPU is missing, so the collectors replay"
    say "tests/fixtures/replay/h200.map (programs: kernels, full, raw, crash, nokernel)"
  fi
  if ! wait_workers $((collectors + analyzers)); then
    say "the broker does not list all $((collectors + analyzers)) workers after 15 s; see the logs in $rundir"
    return 1
  fi
  say "the farm is up: $((collectors + analyzers)) workers registered; agent endpoint $agent_ep"
  say "try: $profeed_bin submit --endpoint $agent_ep --language cuda --arch sm_90 -- kernels all"
}

case "$cmd" in
  start) do_start ;;
  stop) do_stop ;;
  status) do_status ;;
esac
