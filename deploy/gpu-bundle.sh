#!/usr/bin/env bash
# deploy/gpu-bundle.sh [BUILD_DIR] [OUT_DIR]: a folder that runs profeed's farm on a GPU
# host with no build dependencies (no apt there): the four programs, every shared
# library they load (ldd) including this machine's C library and dynamic loader, the
# smoke test's sources and fixtures, and deploy/gpu-smoke.sh itself.
#
# The programs are started through the bundled loader (lib/ld-linux-x86-64.so.2
# --library-path lib ...), so the host's glibc version does not matter and no
# LD_LIBRARY_PATH leaks into what the collector runs (ncu, nvcc's output, python
# with torch keep the host's own libraries). Default BUILD_DIR build/, OUT_DIR
# .gpu-bundle/ (git-ignored). Build first: cmake -S . -B build -DCMAKE_BUILD_TYPE=Release
# && cmake --build build.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build}
out=${2:-$root/.gpu-bundle}
programs=(broker/profeed-broker collector/profeed-collector analyzer/profeed-analyzer client/profeed client/profeed-farm)
for p in "${programs[@]}"; do
  [ -x "$build/$p" ] || { echo "gpu-bundle: $build/$p is missing: build the project first" >&2; exit 2; }
done
rm -rf "$out"
mkdir -p "$out/bin" "$out/lib" "$out/fixtures/wrapper" "$out/fixtures/replay" "$out/fixtures/ncu/h200/capture-2026-12-02" \
  "$out/fixtures/rounds" "$out/fixtures/ncu/h200-v2/capture-2026-12-01"
for p in "${programs[@]}"; do
  cp "$build/$p" "$out/bin/"
done
# Every library ldd resolves, the loader included ("=> /path" or a bare "/path").
for p in "${programs[@]}"; do
  ldd "$build/$p" | awk '/=> \// { print $3 } /^\t\// { print $1 }'
done | sort -u | while read -r lib; do
  cp -L "$lib" "$out/lib/"
done
loader=$(ls "$out"/lib/ld-linux-*.so.* 2>/dev/null | head -1)
[ -n "$loader" ] || { echo "gpu-bundle: no dynamic loader among the libraries" >&2; exit 2; }
# A copy, not a link: links may not survive the trip to the GPU host.
cp "$loader" "$out/lib/ld.so"
cp "$root/tests/fixtures/ncu/h200/kernels.cu" "$out/fixtures/"
cp "$root"/tests/fixtures/wrapper/*.py "$root/tests/fixtures/wrapper/README.md" "$out/fixtures/wrapper/"
cp "$root/tests/fixtures/replay/gpu-smoke.map" "$out/fixtures/replay/"
cp "$root/tests/fixtures/ncu/h200/capture-2026-12-02/core_mwa_raw.csv" "$out/fixtures/ncu/h200/capture-2026-12-02/"
cp "$root/tests/fixtures/rounds/rounds.cu" "$out/fixtures/rounds/"
cp "$root/tests/fixtures/ncu/h200-v2/core_raw.csv" "$out/fixtures/ncu/h200-v2/"
cp "$root/tests/fixtures/ncu/h200-v2/capture-2026-12-01/core_raw.csv" "$out/fixtures/ncu/h200-v2/capture-2026-12-01/"
cp "$root/bench/accuracy.py" "$out/"
cp "$root/deploy/gpu-smoke.sh" "$out/"
git -C "$root" rev-parse HEAD > "$out/COMMIT" 2>/dev/null || echo unknown > "$out/COMMIT"
( cd "$root" && git status --short -- . 2>/dev/null | grep -v '^??' | head -50 ) > "$out/DIRTY" || true
echo "gpu-bundle: $out ($(du -sh "$out" | cut -f1)); run $out/gpu-smoke.sh [--dry] [--out DIR]"
