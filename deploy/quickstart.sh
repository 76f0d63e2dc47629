#!/usr/bin/env bash
# From a fresh clone to feedback: installs the dependencies, builds a Release
# build in build/, starts a local farm on loopback (profeed-broker, one
# profeed-collector, one profeed-analyzer, each its own process), submits one
# job with `profeed submit`, prints the feedback and stops the farm.
#
# The collector profiles for real when this machine has Nsight Compute (`ncu`
# on PATH), an NVIDIA GPU (`nvidia-smi -L`) and nvcc to build the demo program
# (tests/fixtures/ncu/h200/kernels.cu). Otherwise it replays the bundled H200
# capture of that program (tests/fixtures/replay/h200.map), and says so.
set -euo pipefail
cd "$(dirname "$0")/.."

step() { printf '\n========== %s ==========\n' "$*"; }
note() { printf 'quickstart: %s\n' "$*"; }
die() { printf 'quickstart: error: %s\n' "$*" >&2; exit 1; }

step "1/5 Installing build dependencies (deploy/install-deps.sh)"
bash deploy/install-deps.sh

# Warnings stay warnings here: a newer compiler than CI's must not stop a user's
# build. deploy/test.sh builds with -Werror.
step "2/5 Building profeed (Release) in build/"
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DPROFEED_WERROR=OFF
cmake --build build -j "$(nproc 2>/dev/null || echo 2)"

bin=build/client/profeed
broker_bin=build/broker/profeed-broker
collector_bin=build/collector/profeed-collector
analyzer_bin=build/analyzer/profeed-analyzer
for b in "$bin" "$broker_bin" "$collector_bin" "$analyzer_bin"; do
  [ -x "$b" ] || die "the build finished but $b does not exist (its target failed to build?)"
done

# ---------------------------------------------------------------------------
# The farm's processes, their logs, and the trap that stops them. Logs go to a
# temporary folder that is removed after a clean run and kept (its path
# printed) after a failure, so the failure can be read.
logs=$(mktemp -d "${TMPDIR:-/tmp}/profeed-quickstart.XXXXXX")
pids=()
ok=0

stop_farm() {
  local pid
  # SIGTERM first: each process leaves its loop and closes its sockets.
  for pid in "${pids[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
  for _ in $(seq 50); do
    local alive=0
    for pid in "${pids[@]}"; do kill -0 "$pid" 2>/dev/null && alive=1; done
    [ "$alive" -eq 0 ] && break
    sleep 0.1
  done
  # Whatever did not stop within 5 s is killed; then every child is reaped.
  for pid in "${pids[@]}"; do kill -KILL "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  pids=()
}

on_exit() {
  local rc=$?
  stop_farm
  if [ "$ok" -eq 1 ] && [ "$rc" -eq 0 ]; then
    rm -rf "$logs"
  else
    printf 'quickstart: failed (status %d); the farm logs are in %s\n' "$rc" "$logs" >&2
  fi
}
trap on_exit EXIT
trap 'exit 130' INT TERM

# Waits until the broker lists `n` workers (they register with Ready).
wait_workers() {
  local n=$1 got
  for _ in $(seq 100); do
    got=$("$bin" status --endpoint "$agent_ep" --json 2>/dev/null | grep -c '"worker_id"' || true)
    [ "$got" -ge "$n" ] && return 0
    sleep 0.1
  done
  return 1
}

# ---------------------------------------------------------------------------
step "3/5 Choosing the collector's backend"
program=(kernels all)
arch=sm_90
collector_args=(--replay tests/fixtures/replay/quickstart.map)
backend=replay
if command -v ncu >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1; then
  if command -v nvcc >/dev/null 2>&1; then
    cc=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader | head -1 | tr -d ' .')
    arch=sm_$cc
    note "ncu and an NVIDIA GPU are present: building the demo program for $arch"
    nvcc -O3 -arch="$arch" -o "$logs/kernels" tests/fixtures/ncu/h200/kernels.cu ||
      die "nvcc could not build tests/fixtures/ncu/h200/kernels.cu"
    program=("$logs/kernels" all)
    # Jobs run as this user: as root, run-as root says so (the collector
    # refuses root without it; docs/security.md).
    collector_args=(--run-as "$(id -un)")
    backend=ncu
  else
    note "ncu and an NVIDIA GPU are present, but nvcc is not on PATH to build the demo program"
  fi
fi
if [ "$backend" = ncu ]; then
  note "REAL PROFILING: the collector runs Nsight Compute ($(command -v ncu)) on this machine's GPU"
else
  note "NO GPU PROFILING: this machine lacks ncu, an NVIDIA GPU or nvcc, so the collector"
  note "REPLAYS a recorded capture of \`kernels all\` made on an NVIDIA H200"
  note "under the default plan (tests/fixtures/replay/quickstart.map); the feedback below says so."
fi

step "4/5 Starting a local farm on loopback (logs: $logs)"
# Port 0 ("*"): the broker binds free ports and writes them to a file, so a
# quickstart never collides with another farm on this machine.
"$broker_bin" --agents 'tcp://127.0.0.1:*' --workers 'tcp://127.0.0.1:*' \
  --endpoints-file "$logs/endpoints" --state-dir "$logs/state" >"$logs/broker.log" 2>&1 &
pids+=("$!")
for _ in $(seq 100); do [ -s "$logs/endpoints" ] && break; sleep 0.05; done
agent_ep=$(sed -n 's/^agent=//p' "$logs/endpoints" 2>/dev/null || true)
worker_ep=$(sed -n 's/^worker=//p' "$logs/endpoints" 2>/dev/null || true)
if [ -z "$agent_ep" ] || [ -z "$worker_ep" ]; then
  die "profeed-broker did not start (see $logs/broker.log)"
fi
note "profeed-broker     pid ${pids[0]}: agents $agent_ep, workers $worker_ep"

"$collector_bin" --broker "$worker_ep" --worker-id quickstart-collector "${collector_args[@]}" \
  >"$logs/collector.log" 2>&1 &
pids+=("$!")
note "profeed-collector  pid $!: backend $backend"
"$analyzer_bin" --broker "$worker_ep" --worker-id quickstart-analyzer >"$logs/analyzer.log" 2>&1 &
pids+=("$!")
note "profeed-analyzer   pid $!"
wait_workers 2 || die "the collector and the analyzer did not register with the broker within 10 s"
note "the broker lists the collector and the analyzer"

step "5/5 Submitting \`${program[*]}\` (cuda, $arch) and printing its feedback"
echo "\$ $bin submit --endpoint $agent_ep --language cuda --arch $arch -- ${program[*]}"
set +e
"$bin" submit --endpoint "$agent_ep" --language cuda --arch "$arch" -- "${program[@]}"
rc=$?
set -e
if [ $rc -ne 0 ]; then
  die "profeed submit exited with status $rc (2: bad input, 3: the profiler reported an error, 4: refused or no answer, 5: timed out or failed after retries)"
fi

stop_farm
ok=1
note "the farm is stopped; done"
