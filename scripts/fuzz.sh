#!/usr/bin/env bash
# Builds kiln's libFuzzer harnesses (fuzz/, clang, AddressSanitizer and
# UBSan) in their own build directory and runs each for SECONDS (default
# 60), one after another in one process each, from seed corpora: the HLO
# corpus (../shared/corpus), the StableHLO corpus beside it (MLIR text and
# VHLO bytecode), HLO modules written in the unit tests, inputs
# kiln_fuzz_seeds makes from compiled corpus modules (executables, zstd
# blobs, bundles, safetensors, JSON tensors, literal files, HTTP requests
# on every route, Redis replies) and the kept crashers
# (fuzz/regressions/<harness>/), with the dictionaries fuzz/*.dict.
#
# Usage: scripts/fuzz.sh [SECONDS] [HARNESS...]   (default: every harness)
# Environment:
#   KILN_FUZZ_BUILD_DIR  build directory (default: <repo>/build-fuzz)
#   KILN_CORPUS_DIR      HLO corpus (default: <repo>/../shared/corpus)
#   JOBS                 parallel build jobs (default: nproc)
#
# Each harness keeps what it learns in BUILD/corpus/<harness>/ across runs
# and writes its log to BUILD/findings/<harness>.log. A crash, sanitizer
# report, leak, timeout (> 25 s for one input) or OOM (> 2.5 GB) stops that
# harness and leaves the reproducer in BUILD/findings/<harness>/
# (crash-*, leak-*, timeout-*, oom-*; replay with BUILD/fuzz/<harness>
# FILE). Prints each harness's executions and executions per second; exits
# non-zero if any harness found something.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${KILN_FUZZ_BUILD_DIR:-$root/build-fuzz}"
corpus_dir="${KILN_CORPUS_DIR:-$root/../shared/corpus}"
jobs="${JOBS:-$(nproc 2>/dev/null || echo 2)}"
seconds="${1:-60}"
[ $# -gt 0 ] && shift
all_harnesses=(hlo_text hlo_compile http_request http_server executable safetensors json_tensors literal_file store_blob
               bundle redis_reply spmd_partition stablehlo_text stablehlo_bytecode)
harnesses=("${@:-${all_harnesses[@]}}")

bash "$root/scripts/setup.sh" --fuzz

# libstdc++ 12's <expected> needs clang 16 (CMakeLists.txt); -O1 -g1 as in
# the sanitizer test build.
cmake -S "$root" -B "$build" -G Ninja \
  -DCMAKE_C_COMPILER=clang-16 -DCMAKE_CXX_COMPILER=clang++-16 \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1" \
  -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O1 -g1" \
  -DKILN_FUZZ=ON -DKILN_BUILD_BENCH=OFF >/dev/null
targets=(kiln_fuzz_seeds)
for h in "${harnesses[@]}"; do targets+=("${h}_fuzzer"); done
cmake --build "$build" -j "$jobs" --target "${targets[@]}"

# --- Seeds, made afresh each run. ---
seeds="$build/seeds"
rm -rf "$seeds"
mkdir -p "$seeds"
"$build/fuzz/kiln_fuzz_seeds" "$seeds" "$corpus_dir"
mkdir -p "$seeds/hlo_text" "$seeds/literal_file"
if [ -d "$corpus_dir" ]; then
  find "$corpus_dir" -name '*.hlo' -size -64k -exec cp -t "$seeds/hlo_text" {} +
  find "$corpus_dir" -name '*.expected.txt' -size -64k -exec cp -t "$seeds/literal_file" {} +
else
  echo "fuzz: no corpus at $corpus_dir; seeding from the tests only" >&2
fi
# HLO modules the unit tests write as raw strings.
python3 - "$root" "$seeds/hlo_text" <<'EOF'
import pathlib, re, sys
root, out = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
n = 0
for test in sorted(root.glob("*/**/*_test.cc")):
    if test.parts[len(root.parts)].startswith("build"):
        continue
    text = test.read_text(encoding="utf-8", errors="replace")
    for match in re.finditer(r'R"(\w*)\((.*?)\)\1"', text, re.S):
        if "HloModule" in match.group(2):
            (out / f"test_{n:04d}.hlo").write_text(match.group(2))
            n += 1
EOF

# StableHLO beside the HLO corpus: MLIR text (jax/, dynamic/, quantized/)
# and VHLO bytecode (vhlo/*.mlir.bc).
stablehlo_dir="$(dirname "$corpus_dir")/stablehlo"
mkdir -p "$seeds/stablehlo_text" "$seeds/stablehlo_bytecode"
if [ -d "$stablehlo_dir" ]; then
  find "$stablehlo_dir/jax" "$stablehlo_dir/dynamic" "$stablehlo_dir/quantized" -name '*.mlir' -size -16k \
    -exec cp -t "$seeds/stablehlo_text" {} + 2>/dev/null || true
  find "$stablehlo_dir/vhlo" -name '*.mlir.bc' -exec cp -t "$seeds/stablehlo_bytecode" {} + 2>/dev/null || true
fi

# The sharded modules of the corpus and the tests, for the partitioner.
mkdir -p "$seeds/spmd_partition"
grep -l 'sharding=' "$seeds/hlo_text"/* 2>/dev/null | xargs -r cp -t "$seeds/spmd_partition"

seed_dirs() {  # the seed directories of harness $1 that exist (libFuzzer stops on a missing one)
  local dir
  case "$1" in
    hlo_compile) dir="$seeds/hlo_text" ;;
    spmd_partition) dir="$seeds/spmd_partition" ;;
    http_request|http_server) dir="$seeds/http" ;;
    *) dir="$seeds/$1" ;;
  esac
  for dir in "$dir" "$root/fuzz/regressions/$1"; do
    [ -d "$dir" ] && echo "$dir"
  done
  return 0
}
dictionary() {
  case "$1" in
    hlo_text|hlo_compile|literal_file|spmd_partition) echo "$root/fuzz/hlo.dict" ;;
    stablehlo_text) echo "$root/fuzz/stablehlo.dict" ;;
    http_request|http_server) echo "$root/fuzz/http.dict" ;;
    safetensors|json_tensors) echo "$root/fuzz/tensors.dict" ;;
  esac
}

# --- Runs. ---
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:strict_string_checks=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
ASAN_SYMBOLIZER_PATH="${ASAN_SYMBOLIZER_PATH:-$(command -v llvm-symbolizer || true)}"
export ASAN_SYMBOLIZER_PATH
findings="$build/findings"
mkdir -p "$findings"
failed=()
summary=()
for h in "${harnesses[@]}"; do
  work="$build/corpus/$h"
  artifacts="$findings/$h"
  log="$findings/$h.log"
  tmp="$build/tmp/$h"
  mkdir -p "$work" "$artifacts" "$tmp"
  args=(-max_total_time="$seconds" -timeout=25 -rss_limit_mb=2560 -max_len=65536
        -print_final_stats=1 -artifact_prefix="$artifacts/")
  dict="$(dictionary "$h")"
  [ -n "$dict" ] && args+=(-dict="$dict")
  # http_server's requests run on the server's threads, which allocate in one
  # input and free in a later one (connections close after the harness
  # returns, caches fill), so libFuzzer's per-input leak check would scan the
  # whole heap after nearly every input: about 100 exec/s instead of 1,000.
  # Leaks are still reported at exit, after the server is torn down.
  [ "$h" = http_server ] && args+=(-detect_leaks=0)
  mapfile -t dirs < <(seed_dirs "$h")
  echo "fuzz: $h for ${seconds}s (log: $log)"
  status=0
  TMPDIR="$tmp" "$build/fuzz/${h}_fuzzer" "${args[@]}" "$work" "${dirs[@]}" >"$log" 2>&1 || status=$?
  rm -rf "$tmp"
  execs="$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)"
  rate="$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)"
  line="$(printf '%-14s %12s execs %8s exec/s' "$h" "${execs:-?}" "${rate:-?}")"
  if [ "$status" -ne 0 ]; then
    found="$(ls -t "$artifacts" 2>/dev/null | head -1)"
    line+="  FAILED (exit $status): ${found:+$artifacts/$found}"
    failed+=("$h")
    grep -m1 -E '^(==[0-9]+==ERROR|SUMMARY|.*runtime error)' "$log" >&2 || tail -5 "$log" >&2
  fi
  summary+=("$line")
done

echo
printf '%s\n' "${summary[@]}"
if [ ${#failed[@]} -gt 0 ]; then
  echo "fuzz: findings in ${failed[*]}; reproducers under $findings/<harness>/" >&2
  exit 1
fi
