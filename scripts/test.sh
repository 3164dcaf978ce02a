#!/usr/bin/env bash
# Builds kiln and runs every test: the Release build's ctest suite (unit,
# corpus and end-to-end tests, including the Python client against a real
# server), the Python client's offline tests, the OpenAPI lint, then the
# whole ctest suite again under AddressSanitizer and UBSan
# (scripts/sanitize_tests.sh, its own build directory). Installs missing
# Debian packages first. Exits non-zero on any failure.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/setup.sh
jobs=$(nproc 2>/dev/null || echo 2)

# A tree built from scratch (CI's clean clone) is a unity build
# (CMakeLists.txt: about half the compile's CPU time); an existing tree keeps
# its setting, so incremental builds stay per file.
unity=()
[ -f build/CMakeCache.txt ] || unity=(-DKILN_UNITY_BUILD=ON)
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release "${unity[@]}" >/dev/null
cmake --build build -j"$jobs"
ctest --test-dir build --output-on-failure -j"$jobs"

python3 -m unittest discover -s clients/python/tests
bash scripts/lint_openapi.sh

JOBS="$jobs" bash scripts/sanitize_tests.sh
