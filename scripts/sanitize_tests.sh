#!/usr/bin/env bash
# Builds kiln with AddressSanitizer and UBSan in its own build directory and
# runs the whole ctest suite under them: unit tests, the corpus walks (the
# evaluator, kernels and compiler over every corpus module), the end-to-end
# tests of `kiln` and `kiln serve`, and the Python client against the
# sanitized server. Any sanitizer report fails its test.
#
# Usage: scripts/sanitize_tests.sh [extra ctest arguments]
# Environment:
#   KILN_SANITIZE_BUILD_DIR  build directory (default: <repo>/build-asan)
#   JOBS                     parallel build and test jobs (default: nproc)
# Exits non-zero if the build fails, a test fails or a sanitizer reports.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${KILN_SANITIZE_BUILD_DIR:-$root/build-asan}"
jobs="${JOBS:-$(nproc 2>/dev/null || echo 2)}"

# -O1 keeps the corpus walks fast enough and reports readable; -g1 (line
# tables only) symbolizes reports with file:line at about two thirds of the
# compile time of -g. Assertions stay on. KILN_SANITIZE scales the tests'
# timeouts (CMakeLists.txt).
cmake -S "$root" -B "$build" -G Ninja \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1" \
  -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O1 -g1" \
  -DKILN_SANITIZE=ON \
  -DKILN_BUILD_BENCH=OFF >/dev/null
cmake --build "$build" -j "$jobs"

# Leaks fail a test as other reports do; UBSan stops at the first finding.
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:strict_string_checks=1:check_initialization_order=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"

ctest --test-dir "$build" -j "$jobs" --output-on-failure "$@"
