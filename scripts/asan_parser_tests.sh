#!/usr/bin/env bash
# Builds the HLO unit tests with AddressSanitizer and UBSan in a separate
# build directory and runs the parser tests under them: lexer/parser unit
# tests, the robustness tests (truncated, mutated and pathological input),
# the corpus round trip, and the safetensors and literal-file readers.
#
# Usage: scripts/asan_parser_tests.sh [extra ctest arguments]
# Environment:
#   KILN_ASAN_BUILD_DIR  build directory (default: <repo>/build-asan)
#   JOBS                 parallel build and test jobs (default: nproc)
# Exits non-zero if the build fails, a test fails or a sanitizer reports.
# About 5 minutes on 2 cores from a clean build directory.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${KILN_ASAN_BUILD_DIR:-$root/build-asan}"
jobs="${JOBS:-$(nproc)}"

# -O1 keeps ASan reports readable and the build quick; assertions stay on.
cmake -S "$root" -B "$build" -G Ninja \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g" \
  -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O1 -g" \
  -DKILN_SANITIZE=ON \
  -DKILN_BUILD_BENCH=OFF >/dev/null

cmake --build "$build" -j "$jobs" --target kiln_hlo_unit_tests kiln_runtime_io_tests

export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:strict_string_checks=1:check_initialization_order=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"

# Test names as gtest_discover_tests registers them ("Suite.Test").
suites='LexerTest|ShapeParseTest|ConstantParseTest|LiteralParseTest|ModuleParseTest'
suites+='|NastyInputTest|ValueRobustnessTest|Sources/CorpusModuleRobustnessTest'
suites+='|CorpusTest|CorpusRoundTripTest|ModulesEqualTest'
# The safetensors reader takes untrusted bytes from the network.
suites+='|SafetensorsTest|LiteralFileTest'

cd "$build"
# The truncations of the multi-megabyte jax-dumps modules take minutes under
# ASan; the Release run covers them, the other sources keep ASan's view.
ctest -R "^(${suites})\\." -E "TruncatedModules/jax_dumps" -j "$jobs" --timeout 600 \
  --output-on-failure "$@"
