#!/usr/bin/env bash
# Installs every Debian package kiln's build, tests and benchmarks need;
# with --fuzz, also what scripts/fuzz.sh needs (clang 16, its libFuzzer and
# llvm-symbolizer for readable reports).
# Idempotent: prints nothing and touches nothing when all are present.
set -euo pipefail

packages=(
  cmake g++ ninja-build pkg-config
  libsqlite3-dev libuv1-dev node-llhttp libxxhash-dev libzstd-dev zlib1g-dev libjemalloc-dev
  libeigen3-dev flatbuffers-compiler libflatbuffers-dev
  libcli11-dev nlohmann-json3-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  libssl-dev libhiredis-dev redis-server redis-tools nginx
  python3 python3-yaml python3-zstandard
  chromium
)
if [ "${1:-}" = "--fuzz" ]; then
  packages+=(clang-16 libclang-rt-16-dev llvm)
fi

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
[ ${#missing[@]} -eq 0 ] && exit 0

sudo=""
[ "$(id -u)" -ne 0 ] && sudo="sudo"
echo "setup: installing ${missing[*]}" >&2
$sudo apt-get update -qq >/dev/null
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
