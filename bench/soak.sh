#!/usr/bin/env bash
# Load and soak: a real `kiln serve` on 127.0.0.1 (an ephemeral port, a
# fresh store in a temporary folder, pool v5e:4), driven by
# bench/soak_load.py with CONNECTIONS keep-alive connections for SECONDS of
# mixed compile hits, compile misses (each deleted again), executes and
# /metrics, /v1/stats and /healthz, RUNS times. Prints per run the requests,
# the unexpected errors (the target: 0) and the server's RSS, then the last
# run's RSS over the first's (the target: within 10%). Exits non-zero when
# a target is missed or the server does not stop cleanly on SIGTERM.
#
#   bench/soak.sh [SECONDS=60] [CONNECTIONS=256] [RUNS=2]
#   KILN=build/tools/kiln by default; extra `kiln serve` flags in KILN_SOAK_FLAGS.
set -euo pipefail

seconds=${1:-60}
connections=${2:-256}
runs=${3:-2}
here=$(cd "$(dirname "$0")" && pwd)
kiln=${KILN:-$here/../build/tools/kiln}
[[ -x $kiln ]] || { echo "soak: no kiln binary at $kiln (build it, or set KILN)" >&2; exit 2; }

# Each connection is a descriptor on both sides.
if (( $(ulimit -n) < connections + 256 )); then ulimit -n $((connections + 256)); fi

dir=$(mktemp -d /tmp/kiln-soak-XXXXXX)
server=""
# shellcheck disable=SC2317  # run by the EXIT trap
cleanup() {
  if [[ -n $server ]] && kill -0 "$server" 2>/dev/null; then kill -KILL "$server" 2>/dev/null || true; fi
  rm -rf "$dir"
}
trap cleanup EXIT

# shellcheck disable=SC2086  # KILN_SOAK_FLAGS is a list of words
"$kiln" serve --listen 127.0.0.1:0 --db "$dir/kiln.db" --access-log off ${KILN_SOAK_FLAGS:-} \
  >"$dir/serve.out" 2>"$dir/serve.err" &
server=$!
port=""
for _ in $(seq 300); do
  port=$(sed -n 's/^kiln serving on http:\/\/127\.0\.0\.1:\([0-9]*\) .*/\1/p' "$dir/serve.out")
  [[ -n $port ]] && break
  kill -0 "$server" 2>/dev/null || break
  sleep 0.1
done
if [[ -z $port ]]; then
  echo "soak: kiln serve did not start:" >&2
  cat "$dir/serve.err" >&2
  exit 2
fi
echo "soak: $(head -1 "$dir/serve.out")"

status=0
python3 "$here/soak_load.py" --port "$port" --pid "$server" --seconds "$seconds" \
  --connections "$connections" --runs "$runs" --db "$dir/kiln.db" || status=$?

kill -TERM "$server"
if ! wait "$server"; then
  echo "soak: kiln serve did not exit cleanly on SIGTERM:" >&2
  tail -5 "$dir/serve.err" >&2
  status=1
fi
server=""
exit "$status"
