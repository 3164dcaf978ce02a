#!/usr/bin/env bash
# Builds kiln and starts `kiln serve` on its embedded defaults: 127.0.0.1:8470,
# the SQLite file ./kiln.db, a pool of four simulated v5e chips. Installs
# missing Debian packages first. Extra arguments go to `kiln serve`
# (e.g. --listen 127.0.0.1:9000 --pool v5e:4,v6e:2); KILN_* environment
# variables work too. Stops on SIGINT/SIGTERM after draining requests.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/setup.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j"$(nproc 2>/dev/null || echo 2)" --target kiln
exec ./build/tools/kiln serve "$@"
