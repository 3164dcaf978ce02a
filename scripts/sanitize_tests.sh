#!/usr/bin/env bash
# Builds kiln with AddressSanitizer and UBSan in its own build directory and
# runs the ctest suite under them: unit tests, the corpus walks (the
# evaluator, kernels and compiler over the corpus modules), the end-to-end
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
# timeouts (CMakeLists.txt). A tree built from scratch (CI's clean clone)
# is a unity build (CMakeLists.txt: about half the compile's CPU time); an
# existing tree keeps its setting, so incremental builds stay per file.
unity=()
[ -f "$build/CMakeCache.txt" ] || unity=(-DKILN_UNITY_BUILD=ON)
cmake -S "$root" -B "$build" -G Ninja \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1" \
  -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O1 -g1" \
  -DKILN_SANITIZE=ON \
  -DKILN_BUILD_BENCH=OFF "${unity[@]}" >/dev/null
cmake --build "$build" -j "$jobs"

# Leaks fail a test as other reports do; UBSan stops at the first finding.
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:strict_string_checks=1:check_initialization_order=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"

# Left to the Release run of the same suite (scripts/test.sh runs both), to
# keep the whole CI run under 20 minutes on two cores:
#  - ServerExecLimitsTest.TheDefaultStepBudgetEndsWhileTrue spins 2^32
#    evaluator steps (a minute under the sanitizers); the step budget's code
#    is the same one the unit tests end with small budgets in microseconds.
#  - Three of the six interleaved corpus-compile shards (0, 3, 5: about two
#    thirds of that walk's time): the sanitizers compile, run and compare
#    the other half of the corpus modules (shards 1, 2, 4); Release all.
#  - Two of the four corpus-plan shards (0, 2): the sanitizers plan the
#    other half of the modules under every plan kind; Release all.
#  - One of the two random-input evaluation shards (1) and one of the two
#    fingerprint mutation shards (1): the sanitizers evaluate and mutate
#    the other half of the corpus; Release all.
#  - Two of the four StableHLO corpus key shards (2, 3: about 20 s of the
#    sanitized walk's 45) and two of the four StableHLO corpus run shards
#    (2, 3): the sanitizers read, convert, print and run the other half of
#    the StableHLO programs (and every damaged VHLO artifact of the reader's
#    own test); Release all.
release_only='^ServerExecLimitsTest\.TheDefaultStepBudgetEndsWhileTrue$|^Shards/CorpusCompileTest\.EveryModuleCompilesAndMatchesDirectEvaluation/[035]$|^Shards/CorpusPlanTest\.EveryValidModulePlansUnderEveryPlanKind/[02]$|^Shards/CorpusEvalShardTest\.RandomInputs/1$|^Shards/FingerprintMutationShardTest\.MutationsChangeKey/1$|^Shards/StablehloCorpusKeyTest\.KeysSurviveRenamingLocationsAndPrinting/[23]$|^Shards/StablehloCorpusRunTest\.CompiledModulesPassTheirChecks/[23]$'
ctest --test-dir "$build" -j "$jobs" --output-on-failure -E "$release_only" "$@"
