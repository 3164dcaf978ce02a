#!/usr/bin/env bash
# Builds kiln and runs every test: the Release build's ctest suite, then the
# parser tests again under AddressSanitizer. Installs missing Debian packages
# first. Exits non-zero on any failure.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/setup.sh
jobs=$(nproc 2>/dev/null || echo 2)

cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j"$jobs"
ctest --test-dir build --output-on-failure -j"$jobs"

bash scripts/asan_parser_tests.sh
