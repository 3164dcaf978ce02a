#!/usr/bin/env bash
# kiln's HTTP hit path against nginx serving the same bytes, with the same
# wrk settings, in one run: requests/s, p50 and p99 for both and the ratio.
#
# The hit path is GET /v1/executables/{key} answering a ~256 KiB executable
# (the Llama 3.1 405B train step of the corpus, compiled per chip of its
# own 8x16 slice of v5p: one v5e chip cannot hold its 94 GiB). nginx
# serves the same bytes as a static file. Target: kiln >= 0.8x nginx's
# requests/s, p99 <= 5 ms at 64 connections.
#
# Usage: bench/http_hit_bench.sh [seconds] [connections]
# Environment: KILN_BUILD_DIR (default build/) names the build whose kiln runs;
# KILN_SERVE_FLAGS adds flags to `kiln serve` (e.g. "--loops 1");
# KILN_ACCESS_LOG (default off, as nginx's here) turns kiln's access log on.
# kiln runs with its defaults otherwise: one loop thread per core.
# Only 2xx answers count: a baseline that answers errors fails the run.
# Installs wrk and nginx from Debian if missing; builds kiln if needed.
# Everything listens on 127.0.0.1 only and is stopped on exit.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
seconds="${1:-10}"
connections="${2:-64}"
threads=2
kiln_port=18471
nginx_port=18472
module="$root/../shared/corpus/hlo/jax-dumps/tools__benchmarks__hlo__hlo_llama31_405b_bf16_16x8.hlo"

need=()
command -v wrk >/dev/null || need+=(wrk)
command -v nginx >/dev/null || [ -x /usr/sbin/nginx ] || need+=(nginx)
if [ ${#need[@]} -gt 0 ]; then
  sudo=""; [ "$(id -u)" -ne 0 ] && sudo="sudo"
  $sudo apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi
nginx_bin="$(command -v nginx || echo /usr/sbin/nginx)"
build="${KILN_BUILD_DIR:-$root/build}"
kiln="$build/tools/kiln"
[ -x "$kiln" ] || cmake --build "$build" --target kiln

work="$(mktemp -d)"
cleanup() {
  [ -n "${kiln_pid:-}" ] && kill "$kiln_pid" 2>/dev/null && wait "$kiln_pid" 2>/dev/null || true
  [ -f "$work/nginx.pid" ] && kill "$(cat "$work/nginx.pid")" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

KILN_ACCESS_LOG="${KILN_ACCESS_LOG:-off}" "$kiln" serve --listen "127.0.0.1:$kiln_port" --db "$work/kiln.db" --pool v5e:1 \
  ${KILN_SERVE_FLAGS:-} >"$work/kiln.log" 2>&1 &
kiln_pid=$!
for _ in $(seq 50); do curl -sf "http://127.0.0.1:$kiln_port/healthz" >/dev/null && break; sleep 0.1; done

key="$(curl -sf -X POST --data-binary @"$module" "http://127.0.0.1:$kiln_port/v1/compile?chip=v5p" |
       python3 -c 'import json,sys; print(json.load(sys.stdin)["key"])')"
url="http://127.0.0.1:$kiln_port/v1/executables/$key"
curl -sf "$url" -o "$work/executable.bin"
mkdir -p "$work/www"
cp "$work/executable.bin" "$work/www/executable.bin"
size=$(stat -c %s "$work/executable.bin")

cat >"$work/nginx.conf" <<CONF
worker_processes auto;
pid $work/nginx.pid;
error_log $work/nginx-error.log;
events { worker_connections 1024; }
http {
  access_log off;
  sendfile on;
  keepalive_requests 1000000;
  client_body_temp_path $work/tmp;
  proxy_temp_path $work/tmp;
  fastcgi_temp_path $work/tmp;
  uwsgi_temp_path $work/tmp;
  scgi_temp_path $work/tmp;
  server {
    listen 127.0.0.1:$nginx_port;
    root $work/www;
    default_type application/octet-stream;
  }
}
CONF
mkdir -p "$work/tmp"
# nginx's workers run as an unprivileged user: mktemp's 0700 directory would
# turn every request into a 403 (and a meaningless, fast baseline).
chmod 755 "$work" "$work/www"
chmod 644 "$work/www/executable.bin"
"$nginx_bin" -c "$work/nginx.conf" -p "$work" 2>/dev/null
nginx_url="http://127.0.0.1:$nginx_port/executable.bin"
for _ in $(seq 50); do curl -sf "$nginx_url" -o /dev/null && break; sleep 0.1; done
for url_to_check in "$url" "$nginx_url"; do
  got=$(curl -s -o /dev/null -w '%{http_code} %{size_download}' "$url_to_check")
  if [ "$got" != "200 $size" ]; then
    echo "error: $url_to_check answers '$got', expected '200 $size'" >&2
    exit 1
  fi
done

run_wrk() {  # url -> "requests/s p50_ms p99_ms"; only 2xx answers count
  wrk -t"$threads" -c"$connections" -d"${seconds}s" --latency "$1" 2>/dev/null |
    awk '/Requests\/sec/ {rps=$2}
         /^ +50%/ {p50=$2} /^ +99%/ {p99=$2}
         /Non-2xx or 3xx responses/ {bad=$NF}
         function ms(v) { if (v ~ /us$/) return v/1000; if (v ~ /ms$/) return v+0; if (v ~ /s$/) return v*1000; return v }
         END {if (bad > 0) {print "error: " bad " non-2xx answers from '"$1"'" > "/dev/stderr"; rps = 0}
              printf "%s %.3f %.3f\n", rps, ms(p50), ms(p99)}'
}

cpu_ticks() {  # pids... -> user+system clock ticks they have used
  local total=0 pid
  for pid in "$@"; do
    read -r -a stat <"/proc/$pid/stat" || continue
    total=$((total + stat[13] + stat[14]))
  done
  echo "$total"
}
nginx_pids() { local master; master="$(cat "$work/nginx.pid")"; echo "$master" $(pgrep -P "$master"); }

# Requests/s depends on how much of the shared machine each server gets;
# CPU time per request (all of the server's threads, user + kernel) does not.
echo "HTTP hit path, ${size}-byte body, wrk -t$threads -c$connections -d${seconds}s"
k_ticks0=$(cpu_ticks "$kiln_pid")
read -r k_rps k_p50 k_p99 < <(run_wrk "$url")
k_ticks=$(( $(cpu_ticks "$kiln_pid") - k_ticks0 ))
n_ticks0=$(cpu_ticks $(nginx_pids))
read -r n_rps n_p50 n_p99 < <(run_wrk "$nginx_url")
n_ticks=$(( $(cpu_ticks $(nginx_pids)) - n_ticks0 ))
printf "  kiln   GET /v1/executables/{key}  %10.0f req/s  p50 %7.3f ms  p99 %7.3f ms\n" "$k_rps" "$k_p50" "$k_p99"
printf "  nginx  static file                %10.0f req/s  p50 %7.3f ms  p99 %7.3f ms\n" "$n_rps" "$n_p50" "$n_p99"
python3 - "$k_rps" "$n_rps" "$k_p99" "$k_ticks" "$n_ticks" "$seconds" "$(getconf CLK_TCK)" <<'PY'
import sys
k, n, p99, k_ticks, n_ticks, seconds, hz = map(float, sys.argv[1:])
def cpu_us(ticks, rps):
    return ticks / hz * 1e6 / (rps * seconds) if rps else 0
print(f"  server CPU per request: kiln {cpu_us(k_ticks, k):.1f} us, nginx {cpu_us(n_ticks, n):.1f} us")
ratio = k / n if n else 0
print(f"  ratio kiln/nginx requests/s: {ratio:.2f}x (target >= 0.8x): {'met' if ratio >= 0.8 else 'NOT met'}")
print(f"  kiln p99 {p99:.3f} ms (target <= 5 ms): {'met' if p99 <= 5 else 'NOT met'}")
PY
