#!/usr/bin/env bash
# A broker under a file-size limit (issue 15, defect 4): `ulimit -f 256`
# makes a journal write past 256 KiB fail with SIGXFSZ, which kills a
# process that does not ignore it. The broker must instead take it as the
# disk-full case docs/reliability.md promises: the job whose pass cannot be
# stored fails with the reason, the broker keeps serving, and the record is
# cut off so that later jobs that fit still run.
#
#   tests/fsize_test.sh BUILD_DIR REPLAY_MAP
set -u
build=$1
map=$2
. "$(dirname "$0")/farm_lib.sh"
farm_scratch fsize
profeed=$build/client/profeed
hb=(--heartbeat-ms 200 --liveness 3)

# Only the broker runs under the limit (its log, a few KiB, too).
bash -c 'ulimit -f 256 && exec "$0" "$@"' "$build/broker/profeed-broker" --agents "ipc://$dir/agents" \
  --workers "ipc://$dir/workers" --state-dir "$dir/state" "${hb[@]}" >>"$dir/broker.log" 2>&1 &
broker_pid=$!
pids+=("$broker_pid")
agent_ep="ipc://$dir/agents"
"$build/collector/profeed-collector" --broker "ipc://$dir/workers" --worker-id c1 --replay "$map" "${hb[@]}" \
  >>"$dir/c1.log" 2>&1 &
pids+=("$!")
"$build/analyzer/profeed-analyzer" --broker "ipc://$dir/workers" --worker-id a1 "${hb[@]}" >>"$dir/a1.log" 2>&1 &
pids+=("$!")
sleep 1
submit() { # submit OUT JOB_ID PROGRAM
  "$profeed" submit --endpoint "$agent_ep" --language cuda --arch sm_90 --job-id "$2" --wait-s 20 -- "$3" all \
    >"$dir/$1.out" 2>"$dir/$1.err"
}

# The "full" capture is one pass of about 500 KiB: it does not fit under
# 256 KiB; the three passes of "kernels" (125 KiB) do.
submit big fsize-big full
check "the broker survives a journal write past the file-size limit" kill -0 "$broker_pid"
check "the job whose pass could not be stored fails, saying why" \
  grep -q "could not store a pass output: .*File too large" "$dir/big.out" "$dir/big.err"
submit small fsize-small kernels
check "a later job that fits completes" grep -q "^1\. atomic_hist" "$dir/small.out"
check "... and the broker is still running" kill -0 "$broker_pid"
exit "$fail"
