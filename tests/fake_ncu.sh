#!/bin/sh
# A stand-in for ncu, for tests/sandbox_test.sh on machines without a GPU:
# it profiles nothing. It skips ncu's options (--csv alone, the others with a
# value) and runs the program.
if [ "$1" = "--version" ]; then echo "NVIDIA (R) Nsight Compute Command Line Profiler"; echo "Version 0.0 (test stand-in)"; exit 0; fi
while [ $# -gt 0 ]; do
  case $1 in
    --csv) shift ;;
    --) shift; break ;;
    --*) shift 2 ;;
    *) break ;;
  esac
done
exec "$@"
