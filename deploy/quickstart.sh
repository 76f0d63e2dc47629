#!/usr/bin/env bash
# From a fresh clone to feedback: installs the dependencies, builds a Release
# build in build/, and analyzes a real Nsight Compute capture from an NVIDIA
# H200 that ships in tests/fixtures/ (no GPU needed for this step).
set -euo pipefail
cd "$(dirname "$0")/.."

step() { printf '\n========== %s ==========\n' "$*"; }

step "1/3 Installing build dependencies (deploy/install-deps.sh)"
bash deploy/install-deps.sh

# Warnings stay warnings here: a newer compiler than CI's must not stop a user's
# build. deploy/test.sh builds with -Werror.
step "2/3 Building profeed (Release) in build/"
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DPROFEED_WERROR=OFF
cmake --build build -j "$(nproc 2>/dev/null || echo 2)"

bin=build/client/profeed
if [ ! -x "$bin" ]; then
  echo "quickstart: error: the build finished but $bin does not exist; the profeed command" >&2
  echo "quickstart: (client/) is not part of this checkout yet, or its target failed to build" >&2
  exit 1
fi

raw=tests/fixtures/ncu/h200/full_raw.csv
details=tests/fixtures/ncu/h200/full_details.csv
step "3/3 Feedback for nine kernels profiled with Nsight Compute on an H200"
echo "\$ $bin analyze --format text $raw $details"
set +e
"$bin" analyze --format text "$raw" "$details"
rc=$?
set -e
if [ $rc -ne 0 ]; then
  echo "quickstart: error: profeed analyze exited with status $rc (2: bad input, 3: the profiler reported an error)" >&2
  exit $rc
fi
