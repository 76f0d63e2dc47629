#!/usr/bin/env bash
# Runs farm tests again and again on one build folder and counts how each
# ends: the evidence that they fail only when the code is wrong (issue 13,
# docs/reliability.md). Not part of ctest: a loop takes hours.
#
#   tests/loop_farm.sh BUILD_DIR [N] [TEST...]
#
# N rounds (default 30); each round runs every TEST once (default farm_faults
# farm_durable farm_curve farm_netns) through ctest, so a loop cut short still
# covers each test about equally. LOOP_UNTIL (anything `date -d` reads, e.g.
# "18:10") stops it from starting a round after that time. The output of every
# run that did not pass is kept in BUILD_DIR/loop_farm/ (the path is printed).
# Prints one line per run and the counts at the end; exits 1 if any run failed.
set -u
build=${1:?usage: tests/loop_farm.sh BUILD_DIR [N] [TEST...]}
rounds=${2:-30}
shift $(($# >= 2 ? 2 : 1))
tests=("$@")
[ ${#tests[@]} -gt 0 ] || tests=(farm_faults farm_durable farm_curve farm_netns)
[ -f "$build/CTestTestfile.cmake" ] || { echo "loop_farm: $build is not a configured build folder" >&2; exit 2; }
until_s=
if [ -n "${LOOP_UNTIL:-}" ]; then
  until_s=$(date -d "$LOOP_UNTIL" +%s) || { echo "loop_farm: LOOP_UNTIL=$LOOP_UNTIL is not a time" >&2; exit 2; }
fi
keep=$build/loop_farm
mkdir -p "$keep"
declare -A passed failed skipped
for t in "${tests[@]}"; do passed[$t]=0 failed[$t]=0 skipped[$t]=0; done

round=0
while [ "$round" -lt "$rounds" ]; do
  if [ -n "$until_s" ] && [ "$(date +%s)" -ge "$until_s" ]; then
    echo "# stopped before round $((round + 1)): it is past LOOP_UNTIL ($LOOP_UNTIL)"
    break
  fi
  round=$((round + 1))
  for t in "${tests[@]}"; do
    out=$keep/$t.$round.out
    start=$SECONDS
    (cd "$build" && ctest -R "^$t\$" --output-on-failure) >"$out" 2>&1
    rc=$?
    if grep -q "Skipped\|Not Run\|No tests were found" "$out"; then
      verdict=skipped
    elif [ "$rc" -eq 0 ]; then
      verdict=passed
    else
      verdict=failed
    fi
    case $verdict in
    passed) passed[$t]=$((passed[$t] + 1)); rm -f "$out" ;;
    failed) failed[$t]=$((failed[$t] + 1)) ;;
    skipped) skipped[$t]=$((skipped[$t] + 1)) ;;
    esac
    printf '%s round %d/%d %-13s %-7s %4d s%s\n' "$(date -u +%H:%M:%S)" "$round" "$rounds" "$t" "$verdict" \
      $((SECONDS - start)) "$([ "$verdict" = passed ] || echo " ($out)")"
  done
done

echo "# $build: $round rounds"
any=0
for t in "${tests[@]}"; do
  printf '%-13s passed %d, failed %d, skipped %d\n' "$t" "${passed[$t]}" "${failed[$t]}" "${skipped[$t]}"
  [ "${failed[$t]}" -eq 0 ] || any=1
done
exit "$any"
