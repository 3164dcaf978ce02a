#!/usr/bin/env bash
# Runs the Python client's tests (clients/python/tests: the offline ones and
# test_client.py's live ones) and the route-table check against a real
# `kiln serve` on an ephemeral loopback port. The client must work with the
# standard library alone and use zstd where a codec is installed, so the tests
# run once with `python3` and, when that has no zstd codec, again with a
# Python that has one (Debian's /usr/bin/python3 with python3-zstandard).
# Usage: python_client_test.sh KILN_BINARY
# Exits 77 (skipped) when python3 or PyYAML is missing.
set -euo pipefail
kiln="$1"
root="$(cd "$(dirname "$0")/.." && pwd)"
if ! command -v python3 >/dev/null; then
  echo "python_client_test: python3 is not installed; skipping" >&2
  exit 77
fi
if ! python3 -c 'import yaml' 2>/dev/null; then
  echo "python_client_test: PyYAML (python3-yaml) is not installed; skipping" >&2
  exit 77
fi

"$kiln" serve --print-routes | python3 "$root/scripts/check_openapi_routes.py" "$root/schema/openapi.yaml" -

work="$(mktemp -d)"
server_pid=""
cleanup() {
  if [ -n "$server_pid" ]; then kill -TERM "$server_pid" 2>/dev/null || true; wait "$server_pid" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT

: >"$work/out"  # exists before the server's shell opens it, so the first read never fails
"$kiln" serve --listen 127.0.0.1:0 --db "$work/kiln.db" --pool v5e:2 >>"$work/out" 2>"$work/log" &
server_pid=$!
port=""
for _ in $(seq 1 300); do
  port="$(sed -n 's|^kiln serving on http://127.0.0.1:\([0-9]*\) .*|\1|p' "$work/out")"
  [ -n "$port" ] && break
  sleep 0.1
done
if [ -z "$port" ]; then
  echo "python_client_test: kiln serve did not start:" >&2
  cat "$work/log" >&2
  exit 1
fi
cd "$root/clients/python"
has_zstd() {
  "$1" -c 'import sys; from kiln_client import zstd; sys.exit(0 if zstd.available() else 1)' 2>/dev/null
}
pythons=(python3)
if ! has_zstd python3; then
  if [ -x /usr/bin/python3 ] && has_zstd /usr/bin/python3; then
    pythons+=(/usr/bin/python3)
  else
    echo "python_client_test: no Python here has a zstd codec (python3-zstandard); compressed bodies untested" >&2
  fi
fi
for python in "${pythons[@]}"; do
  codec=without; has_zstd "$python" && codec=with
  echo "== $python ($("$python" --version 2>&1), $codec zstd)"
  KILN_URL="http://127.0.0.1:$port" KILN_BIN="$kiln" "$python" -m unittest discover -v -s tests
done
