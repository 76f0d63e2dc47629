#!/usr/bin/env bash
# The collector's sandbox end to end (issue 7): a collector with a real
# (non-replay) backend, whose `ncu` is tests/fake_ncu.sh (it runs the program
# and profiles nothing: no GPU is needed), allowed to run only `sh`, with a
# 1 MiB file limit, a 1 s CPU limit and a 8 s pass timeout (far
# enough above the CPU limit that a loaded machine, where the spinning job gets
# a fraction of a core, still stops it at its CPU limit first). Agents submit:
#  - a program outside the allowlist: refused, and the feedback says why;
#  - a job that fills the disk: stopped at its file limit, and reported;
#  - a job that spins: stopped at its CPU limit, and reported;
#  - a job that forks endlessly: stopped at the timeout, no process left;
#  - as root: jobs run as `nobody`, and a collector without run-as refuses.
#
#   tests/sandbox_test.sh BUILD_DIR
set -u
build=$1
. "$(dirname "$0")/farm_lib.sh"
farm_scratch sandbox
# The fork bomb's sleeps carry this run's PID in their duration, so the check
# and the clean-up below see only this run's, never a parallel run's.
nap="41.$$"
nap_re="sleep 41[.]$$\\b"
cleanup() {
  farm_stop_and_report
  pkill -f "$nap_re" 2>/dev/null
  rm -rf "$dir"
}
trap cleanup EXIT
profeed=$build/client/profeed
hb=(--heartbeat-ms 200 --liveness 3)
mkdir -p "$dir/bin" "$dir/work"
cp "$(dirname "$0")/fake_ncu.sh" "$dir/bin/ncu"
chmod +x "$dir/bin/ncu"
# As root, jobs must run as another user: nobody, who needs to reach these.
as_user=()
if [ "$(id -u)" -eq 0 ]; then
  as_user=(--run-as nobody)
  chmod 0755 "$dir" "$dir/bin"
  chmod 0777 "$dir/work"
fi

farm_ports sandbox 2
farm_broker "tcp://127.0.0.1:${ports[0]}" "tcp://127.0.0.1:${ports[1]}"
PATH="$dir/bin:$PATH" "$build/collector/profeed-collector" --broker "$worker_ep" --gpu "Test GPU:sm_90" \
  --allow-programs sh --file-limit-mb 1 --cpu-limit-s 1 --pass-timeout-s 8 --attempts 1 --workdir "$dir/work" \
  "${as_user[@]}" "${hb[@]}" >>"$dir/collector.log" 2>&1 &
pids+=("$!")
"$build/analyzer/profeed-analyzer" --broker "$worker_ep" "${hb[@]}" >>"$dir/analyzer.log" 2>&1 &
pids+=("$!")
sleep 1.5

submit() { # submit OUT PROGRAM ARGS...
  local out=$1
  shift
  "$profeed" submit --endpoint "$agent_ep" --language cuda --wait-s 30 -- "$@" >"$dir/$out.out" 2>"$dir/$out.err"
}
submit outside ls /
rc=$?
check "a program outside allow-programs is refused, saying so" \
  bash -c "[ $rc -eq 2 ] && grep -q 'ls (.*) is not in this collector.s allow-programs' '$dir/outside.err'"
# allow-programs sh means the sh on the collector's PATH (issue 15): not a
# file named sh elsewhere, not a link named sh to another program, not a link
# with another name to a file named sh.
mkdir -p "$dir/work/other" "$dir/work/fake"
cp "$(command -v ls)" "$dir/work/other/sh"
ln -s "$(command -v ls)" "$dir/work/fake/sh"
ln -s "$dir/work/other/sh" "$dir/work/innocent"
refused() { # refused OUT: the job was refused by the allowlist
  [ "$rc" -eq 2 ] && grep -q "is not in this collector.s allow-programs" "$dir/$1.err"
}
submit elsewhere "$dir/work/other/sh" /; rc=$?
check "a file named sh outside PATH is refused" refused elsewhere
submit linked "$dir/work/fake/sh" /; rc=$?
check "a link named sh to another program is refused" refused linked
submit innocent ./innocent /; rc=$?
check "a link named otherwise to a file named sh is refused" refused innocent
submit disk sh -c 'exec head -c 50000000 /dev/zero > big'
rc=$?
check "a job that fills the disk is stopped at its file limit and reported" \
  bash -c "[ $rc -eq 3 ] && grep -q 'stopped the run: it reached its file size limit' '$dir/disk.err' &&
           [ \$(stat -c %s '$dir/work/big') -le 1048576 ]"
submit spin sh -c 'while :; do :; done'
rc=$?
check "a job that spins is stopped at its CPU limit and reported" \
  bash -c "[ $rc -eq 3 ] && grep -q 'stopped the run: it reached its CPU time limit' '$dir/spin.err'"
submit forks sh -c "while :; do sleep $nap & done"
rc=$?
sleep 0.5
check "a job that forks endlessly is stopped, with every process it started" \
  bash -c "[ $rc -ne 0 ] && ! pgrep -f '$nap_re' >/dev/null"
check "the collector's log says what jobs may run" grep -q "jobs run: programs sh; environment filtered" \
  "$dir/collector.log"
if [ "$(id -u)" -eq 0 ]; then
  check "as root, the jobs ran as the run-as user" grep -q "; user nobody" "$dir/collector.log"
  PATH="$dir/bin:$PATH" "$build/collector/profeed-collector" --broker "$worker_ep" --gpu "Test GPU:sm_90" \
    >"$dir/root.log" 2>&1
  rc=$?
  check "a collector started as root without run-as refuses to start, saying why" \
    bash -c "[ $rc -ne 0 ] && grep -q 'started as root, this collector would run agents. jobs as root' '$dir/root.log'"
fi
exit "$fail"
