#!/usr/bin/env bash
# kiln prewarm throughput: the corpus's training graphs (hlo/torchxla-dumps
# and hlo/jax-dumps) pre-warmed into a fresh store with --jobs 1 and with
# --jobs 2, alternately, `rounds` times each in one run; prints modules,
# the best wall seconds and CPU seconds of each and the ratio 1 job / 2 jobs.
# Target: >= 1.7x on 2 cores (both cores free; on a shared machine the
# ratio falls with the load, which the load average line shows).
#
# Every module of both folders is included (the largest, 4 MB, compiles in
# under a second here); --max-file-bytes in KILN_PREWARM_FLAGS leaves larger
# ones out. Modules that fail to compile (three need more HBM than the
# chip has) fail in both runs alike and count as work done.
#
# Usage: bench/prewarm_bench.sh [rounds]   (KILN_BUILD_DIR: default build/)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
rounds="${1:-3}"
kiln="${KILN_BUILD_DIR:-$root/build}/tools/kiln"
corpus="$root/../shared/corpus/hlo"
paths=("$corpus/torchxla-dumps" "$corpus/jax-dumps")
[ -x "$kiln" ] || { echo "prewarm_bench: build kiln first ($kiln)" >&2; exit 1; }
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

# One run into a fresh store: "wall cpu modules compiled failed".
run() {
  local jobs="$1" db="$work/jobs$1.db"
  rm -f "$db" "$db-wal" "$db-shm" "$db-reserve"
  local start end json
  start=$(date +%s.%N)
  json=$(/usr/bin/time -f "%U %S" -o "$work/time" "$kiln" prewarm "${paths[@]}" --db "$db" --jobs "$jobs" --json \
         ${KILN_PREWARM_FLAGS:-} || true)
  end=$(date +%s.%N)
  python3 - "$start" "$end" "$work/time" "$json" <<'PY'
import json, sys
start, end, times, report = float(sys.argv[1]), float(sys.argv[2]), sys.argv[3], json.loads(sys.argv[4])
user, system = (float(x) for x in open(times).read().split()[-2:])
print(f"{end - start:.3f} {user + system:.3f} {report['found']} {report['compiled']} {report['failed']}")
PY
}

best1=""; best2=""
for ((r = 1; r <= rounds; r++)); do
  for jobs in 1 2; do
    read -r wall cpu found compiled failed < <(run "$jobs")
    printf 'round %d  --jobs %d  %s s wall  %s s cpu  %s modules (%s compiled, %s failed)\n' \
      "$r" "$jobs" "$wall" "$cpu" "$found" "$compiled" "$failed"
    if [ "$jobs" = 1 ]; then
      best1=$(python3 -c "print(min(float('$wall'), float('${best1:-1e9}')))")
    else
      best2=$(python3 -c "print(min(float('$wall'), float('${best2:-1e9}')))")
    fi
  done
done
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) cores"
python3 -c "print(f'prewarm {$found} modules: 1 job {$best1:.3f} s, 2 jobs {$best2:.3f} s, ratio {$best1 / $best2:.2f}x (target >= 1.7x)')"
