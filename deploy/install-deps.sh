#!/usr/bin/env bash
# Installs the Debian/Ubuntu packages profeed needs to build, test and benchmark.
# Idempotent: packages already installed are skipped, and `apt-get update` runs
# only when something is missing. Runs as root, or through sudo when available.
set -euo pipefail

packages=(
  build-essential cmake pkg-config gcc clang   # toolchain; the tests build with both compilers
  libzmq3-dev libczmq-dev                      # the farm's transport
  libprotobuf-c-dev protobuf-c-compiler        # the wire format (protoc-c runs at build time)
  libcsv-dev libjansson-dev                    # profiler CSV in, JSON feedback out
  libzstd-dev                                  # pass chunks are zstd frames (common/pass_chunk.c)
  libcriterion-dev                             # the test suites
  python3 python3-pandas hyperfine time        # bench/
  python3-yaml                                 # tests/deploy_check.py (YAML of deploy/)
  iproute2                                     # farm tests (ss, to see sockets)
  xz-utils                                     # the larger fixtures are kept as .xz (tests/CMakeLists.txt)
  python3-pytest python3-zmq python3-protobuf  # python/profeed and its tests
  protobuf-compiler                            # protoc: profeed_pb2.py at build time
)
# The MCP test runs the official client under node. A node from elsewhere
# (NodeSource's nodejs bundles npm, and conflicts with Debian's npm) will do.
command -v npm >/dev/null 2>&1 || packages+=(nodejs npm)

say() { printf 'install-deps: %s\n' "$*"; }

missing=()
for pkg in "${packages[@]}"; do
  if dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'install ok installed'; then
    continue
  fi
  missing+=("$pkg")
done

if [ ${#missing[@]} -eq 0 ]; then
  say "all ${#packages[@]} packages are installed; nothing to do"
  exit 0
fi
say "missing: ${missing[*]}"

if ! command -v apt-get >/dev/null 2>&1; then
  say "error: apt-get not found; install these with your package manager: ${missing[*]}" >&2
  exit 1
fi
if [ "$(id -u)" -eq 0 ]; then
  as_root=()
elif command -v sudo >/dev/null 2>&1; then
  as_root=(sudo)
  say "not root: using sudo"
else
  say "error: not root and sudo is not available; as root run: apt-get install ${missing[*]}" >&2
  exit 1
fi

# sudo resets the environment, so the frontend setting goes through env(1).
say "running apt-get update"
"${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update
say "running apt-get install -y --no-install-recommends ${missing[*]}"
"${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${missing[@]}"
say "installed ${#missing[@]} package(s)"
