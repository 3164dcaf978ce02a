#!/usr/bin/env python3
"""A compile cache hit from the Python client against the same hit sent raw.

Starts `kiln serve` on 127.0.0.1 (an ephemeral port, a temporary store),
compiles a large corpus module once, then measures cache hits of it, the
kinds interleaved request by request so that both see the same machine load:

  raw     the HLO file's bytes POSTed as the body on one kept-alive
          http.client connection, the answer read and not parsed (baseline);
  client  KilnClient.compile(hlo_text) on one client: what a trainer calls;
  json    the HLO wrapped in a JSON body, as the client sent it before
          (reference: what the raw body saves);
  curl    `curl --data-binary @FILE`, its time_total (a new process and
          connection each time; reference);
  zstd    the client with compress_requests="always" (when a zstd codec is
          installed; reference: on loopback compression costs more than it saves).

Prints p50 and p95 of each and the client/raw ratio. Target: client p50 within
2x raw p50.

Usage: bench/python_client_hit_bench.py [--iterations N] [--module FILE] [--chip CHIP]
Environment: KILN_BUILD_DIR (default build/) names the build whose kiln runs.
"""

import argparse
import http.client
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
sys.path.insert(0, os.path.join(ROOT, "clients", "python"))

from kiln_client import KilnClient, zstd  # noqa: E402

DEFAULT_MODULE = os.path.join(ROOT, "..", "shared", "corpus", "hlo", "jax-dumps",
                              "tools__benchmarks__hlo__hlo_llama31_8b_bf16_2x8.hlo")
TARGET_RATIO = 2.0


def start_server(kiln, work):
    out_path = os.path.join(work, "out")
    out = open(out_path, "w")
    log = open(os.path.join(work, "log"), "w")
    server = subprocess.Popen([kiln, "serve", "--listen", "127.0.0.1:0", "--db", os.path.join(work, "kiln.db"),
                               "--pool", "v5e:1"], stdout=out, stderr=log,
                              env=dict(os.environ, KILN_ACCESS_LOG="off"))
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        with open(out_path) as handle:
            for line in handle:
                if line.startswith("kiln serving on http://127.0.0.1:"):
                    return server, int(line.split("127.0.0.1:", 1)[1].split()[0])
        if server.poll() is not None:
            break
        time.sleep(0.05)
    server.kill()
    with open(os.path.join(work, "log")) as handle:
        sys.exit("kiln serve did not start:\n" + handle.read())


def percentile(samples, fraction):
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(round(fraction * (len(ordered) - 1))))]


class RawHits:
    """POSTs one body on a kept-alive connection; checks each answer is a hit."""

    def __init__(self, port, path, body, content_type):
        self.connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        self.path, self.body, self.content_type = path, body, content_type

    def __call__(self):
        self.connection.request("POST", self.path, body=self.body, headers={"Content-Type": self.content_type})
        response = self.connection.getresponse()
        data = response.read()
        if response.status != 200 or b'"cache":"hit"' not in data:
            sys.exit(f"raw hit answered {response.status}: {data[:300]!r}")


def curl_ms(port, chip, module):
    out = subprocess.run(["curl", "-s", "-o", "/dev/null", "-w", "%{http_code} %{time_total}", "--data-binary",
                          "@" + module, f"http://127.0.0.1:{port}/v1/compile?chip={chip}"],
                         capture_output=True, text=True, check=True, timeout=60).stdout.split()
    if out[0] != "200":
        sys.exit(f"curl hit answered {out[0]}")
    return float(out[1]) * 1e3


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--iterations", type=int, default=200)
    parser.add_argument("--module", default=DEFAULT_MODULE)
    parser.add_argument("--chip", default="v5e")
    args = parser.parse_args()

    kiln = os.path.join(os.environ.get("KILN_BUILD_DIR", os.path.join(ROOT, "build")), "tools", "kiln")
    if not os.access(kiln, os.X_OK):
        sys.exit(f"{kiln} is missing: cmake --build build --target kiln")
    with open(args.module, "rb") as handle:
        body = handle.read()
    hlo_text = body.decode("utf-8")

    work = tempfile.mkdtemp(prefix="kiln-pyclient-bench-")
    server = None
    try:
        server, port = start_server(kiln, work)
        url = f"http://127.0.0.1:{port}"
        client = KilnClient(url)
        first = client.compile(hlo_text, chip=args.chip)
        print(f"{os.path.basename(args.module)}: {len(body)} bytes, {args.chip}, key {first.key}, "
              f"first compile {first.cache} in {first.compile_ms:.0f} ms")

        raw = RawHits(port, f"/v1/compile?chip={args.chip}", body, "text/plain")
        json_body = json.dumps({"hlo": hlo_text, "chip": args.chip}, sort_keys=True,
                               separators=(",", ":")).encode()
        wrapped = RawHits(port, "/v1/compile", json_body, "application/json")

        def client_hit():
            result = client.compile(hlo_text, chip=args.chip)
            if result.cache != "hit":
                sys.exit(f"client compile answered {result.cache}")

        kinds = {"raw": raw, "client": client_hit}
        slow = {"json": wrapped}
        if zstd.available():
            zstd_client = KilnClient(url, compress_requests="always")
            slow["zstd"] = lambda: zstd_client.compile(hlo_text, chip=args.chip)
        for run in list(kinds.values()) + list(slow.values()):
            run()  # warm: connections open, buffers allocated, compressed body kept

        times = {name: [] for name in list(kinds) + list(slow) + ["curl"]}
        slow_every = 5  # the slow references need fewer samples
        for i in range(args.iterations):
            chosen = list(kinds.items())
            if i % slow_every == 0:
                chosen += list(slow.items())
            if i % 2:
                chosen.reverse()
            for name, run in chosen:
                start = time.perf_counter()
                run()
                times[name].append((time.perf_counter() - start) * 1e3)
            if i % slow_every == 0 and shutil.which("curl"):
                times["curl"].append(curl_ms(port, args.chip, args.module))

        print(f"cache hits, {args.iterations} of raw and client interleaved "
              f"(references every {slow_every}th), milliseconds:")
        labels = {"raw": "raw body, http.client (baseline)", "client": "KilnClient.compile",
                  "json": "JSON-wrapped body (the old client)", "curl": "curl --data-binary (new process)",
                  "zstd": "KilnClient, zstd always"}
        for name, samples in times.items():
            if samples:
                print(f"  {labels[name]:38} p50 {percentile(samples, 0.5):7.2f}  p95 {percentile(samples, 0.95):7.2f}"
                      f"  (n={len(samples)})")
        ratio50 = percentile(times["client"], 0.5) / percentile(times["raw"], 0.5)
        ratio95 = percentile(times["client"], 0.95) / percentile(times["raw"], 0.95)
        verdict = "met" if ratio50 <= TARGET_RATIO else "NOT met"
        print(f"  ratio client/raw: p50 {ratio50:.2f}x, p95 {ratio95:.2f}x "
              f"(target p50 <= {TARGET_RATIO:.0f}x): {verdict}")
        client.close()
    finally:
        if server is not None:
            server.terminate()
            try:
                server.wait(timeout=30)
            except subprocess.TimeoutExpired:
                server.kill()
                server.wait()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
