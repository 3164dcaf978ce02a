#!/usr/bin/env bash
# Builds kiln and starts it on its embedded defaults. Installs missing Debian
# packages first. Extra arguments go to the kiln command.
#
# The HTTP server (`kiln serve`) is not built yet; until it is, this builds
# the binary and shows what it can do.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/setup.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j"$(nproc 2>/dev/null || echo 2)" --target kiln
exec ./build/tools/kiln "${@:---help}"
