#!/usr/bin/env python3
"""Load generator for bench/soak.sh: mixed traffic against a running kiln serve.

Opens CONNECTIONS keep-alive connections to 127.0.0.1:PORT and, for SECONDS
per run, sends on each a random mix of compile hits, compile misses (each
followed by the DELETE of what it stored, so the store does not grow run over
run), executes of a small module (checking the numbers) and GET /metrics,
/v1/stats or /healthz. Every answer is checked: a wrong status, a wrong
answer, a dropped connection or a request taking longer than 30 s counts as an
unexpected error. A 503 with Retry-After (the pool's queue or a server queue
full) is what a client is told to retry: it is retried after Retry-After and
counted apart as shed. After each run it waits for the server to settle and
reads its resident memory (VmRSS of PID).

It prints per run the requests, req/s, unexpected errors, shed requests, the
latency per kind, the server's CPU time per request (which, unlike req/s, does
not depend on what else the machine runs) and RSS, then the last run's RSS
over the first's; it exits 1 when any run had unexpected errors or the ratio
passes --max-rss-ratio. Python standard library only; asyncio, one thread.
"""

import argparse
import asyncio
import collections
import json
import os
import random
import sys
import time

ADD_MODULE = """HloModule soak_add

ENTRY main {
  x = f32[2,3]{1,0} parameter(0)
  y = f32[2,3]{1,0} parameter(1)
  ROOT sum = f32[2,3]{1,0} add(x, y)
}
"""
ADD_INPUTS = json.dumps({"inputs": [
    {"shape": [2, 3], "dtype": "f32", "data": [1, 2, 3, 4, 5, 6]},
    {"shape": [2, 3], "dtype": "f32", "data": [10, 20, 30, 40, 50, 60]}]})
ADD_OUTPUT = [11, 22, 33, 44, 55, 66]

# The share of each kind of request (they add up to 1).
MIX = [("hit", 0.40), ("miss", 0.08), ("execute", 0.32), ("metrics", 0.10), ("stats", 0.05), ("healthz", 0.05)]
HIT_MODULES = 32
REQUEST_TIMEOUT_S = 30


def hit_module(i):
    """One of the HIT_MODULES modules compiled before the runs."""
    return (f"HloModule soak_hit_{i}\n\nENTRY main {{\n  p = f32[{i + 1},128] parameter(0)\n"
            f"  ROOT n = f32[{i + 1},128] negate(p)\n}}\n")


def miss_module(tag):
    """A module no one compiled before: its constant is `tag`."""
    return (f"HloModule soak_miss\n\nENTRY main {{\n  p = f32[8] parameter(0)\n"
            f"  c = f32[] constant({tag})\n  b = f32[8] broadcast(c), dimensions={{}}\n"
            f"  ROOT a = f32[8] add(p, b)\n}}\n")


class Unexpected(Exception):
    """An answer the soak did not expect; its text is the reason."""


class Shed(Exception):
    """503 with Retry-After: the server shed the request, as it may under load."""

    def __init__(self, kind, retry_after, code):
        super().__init__(f"{kind}: 503 {code}")
        self.retry_after = retry_after
        self.code = code


class Connection:
    """One keep-alive HTTP/1.1 connection; reconnects when the server closes."""

    def __init__(self, port):
        self.port = port
        self.reader = None
        self.writer = None

    async def request(self, method, target, body=b"", content_type=None):
        if self.writer is None:
            self.reader, self.writer = await asyncio.open_connection("127.0.0.1", self.port)
        head = f"{method} {target} HTTP/1.1\r\nHost: soak\r\n"
        if content_type:
            head += f"Content-Type: {content_type}\r\n"
        if body or method == "POST":
            head += f"Content-Length: {len(body)}\r\n"
        self.writer.write(head.encode() + b"\r\n" + body)
        await self.writer.drain()
        raw_head = await self.reader.readuntil(b"\r\n\r\n")
        lines = raw_head.decode("latin-1").split("\r\n")
        status = int(lines[0].split(" ")[1])
        headers = {}
        for line in lines[1:]:
            if ":" in line:
                name, value = line.split(":", 1)
                headers[name.strip().lower()] = value.strip()
        length = int(headers.get("content-length", "0"))
        payload = await self.reader.readexactly(length) if method != "HEAD" else b""
        if headers.get("connection", "").lower() == "close":
            self.close()
        return status, headers, payload

    def close(self):
        if self.writer is not None:
            self.writer.close()
        self.reader = self.writer = None


def expect(condition, reason):
    if not condition:
        raise Unexpected(reason)


def check_shed(kind, status, headers, body):
    """Raises Shed for a 503 that says when to retry (pool or queues full)."""
    if status == 503 and headers.get("retry-after", "").isdigit():
        code = json.loads(body).get("error", {}).get("code", "") if body.startswith(b"{") else ""
        if code in ("pool_saturated", "overloaded", "host_memory_busy"):
            raise Shed(kind, int(headers["retry-after"]), code)


async def one_request(conn, kind, state):
    """Sends one request of `kind` and checks its answer."""
    if kind == "hit":
        i = random.randrange(HIT_MODULES)
        status, headers, body = await conn.request("POST", "/v1/compile", hit_module(i).encode(), "text/plain")
        check_shed(kind, status, headers, body)
        expect(status == 200, f"hit: status {status}: {body[:200]!r}")
        expect(headers.get("x-kiln-cache") == "hit", f"hit: cache {headers.get('x-kiln-cache')}")
        expect(headers.get("x-kiln-key") == state["hit_keys"][i], "hit: another key")
    elif kind == "miss":
        state["miss_counter"] += 1
        # Distinct f32 values (below 2^24) for distinct keys, run after run.
        tag = state["run"] * 1_000_000 + state["miss_counter"]
        status, headers, body = await conn.request("POST", "/v1/compile", miss_module(tag).encode(), "text/plain")
        check_shed(kind, status, headers, body)
        expect(status == 200, f"miss: status {status}: {body[:200]!r}")
        expect(headers.get("x-kiln-cache") == "miss", f"miss: cache {headers.get('x-kiln-cache')}")
        expect(headers.get("x-kiln-stored") == "true", f"miss: stored {headers.get('x-kiln-stored')}")
        key = headers.get("x-kiln-key", "")
        status, _, body = await conn.request("DELETE", f"/v1/executables/{key}")
        expect(status == 204, f"delete: status {status}: {body[:200]!r}")
    elif kind == "execute":
        status, headers, body = await conn.request("POST", f"/v1/executables/{state['add_key']}/execute",
                                                   ADD_INPUTS.encode(), "application/json")
        check_shed(kind, status, headers, body)
        expect(status == 200, f"execute: status {status}: {body[:200]!r}")
        expect(json.loads(body)["outputs"][0]["data"] == ADD_OUTPUT, "execute: wrong outputs")
    elif kind == "metrics":
        status, _, body = await conn.request("GET", "/metrics")
        expect(status == 200 and b"kiln_http_requests_total" in body, f"metrics: status {status}")
    elif kind == "stats":
        status, _, body = await conn.request("GET", "/v1/stats")
        expect(status == 200 and b'"entries"' in body, f"stats: status {status}")
    else:
        status, _, body = await conn.request("GET", "/healthz")
        expect(status == 200, f"healthz: status {status}: {body[:200]!r}")


async def send_with_retries(conn, kind, state, shed):
    """One request of `kind`; a shed one is sent again after its Retry-After
    (up to 5 times, as a client would), then counts as unexpected."""
    for _ in range(5):
        try:
            return await one_request(conn, kind, state)
        except Shed as e:
            shed[e.code] += 1
            await asyncio.sleep(e.retry_after)
    raise Unexpected(f"{kind}: still shed after 5 tries")


async def worker(port, deadline, state, counts, errors, latencies, shed):
    conn = Connection(port)
    kinds = [kind for kind, _ in MIX]
    weights = [share for _, share in MIX]
    try:
        while time.monotonic() < deadline:
            kind = random.choices(kinds, weights)[0]
            start = time.monotonic()
            try:
                await asyncio.wait_for(send_with_retries(conn, kind, state, shed), REQUEST_TIMEOUT_S)
                latencies[kind].append(time.monotonic() - start)
            except Unexpected as e:
                errors[str(e)[:160]] += 1
            except asyncio.TimeoutError:
                errors[f"{kind}: no answer within {REQUEST_TIMEOUT_S} s"] += 1
                conn.close()
            except (OSError, asyncio.IncompleteReadError, ValueError, IndexError, KeyError) as e:
                errors[f"{kind}: {type(e).__name__}: {str(e)[:120]}"] += 1
                conn.close()
            counts[kind] += 1
    finally:
        conn.close()


def cpu_seconds(pid):
    """User plus system CPU time the process has used so far."""
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def rss_kib(pid):
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise RuntimeError(f"no VmRSS for pid {pid}")


async def prepare(port, state):
    """Compiles the hit modules and the executed one (misses on a fresh store)."""
    conn = Connection(port)
    state["hit_keys"] = []
    for i in range(HIT_MODULES):
        status, headers, body = await conn.request("POST", "/v1/compile", hit_module(i).encode(), "text/plain")
        if status != 200:
            raise SystemExit(f"soak: compiling hit module {i}: {status} {body[:200]!r}")
        state["hit_keys"].append(headers["x-kiln-key"])
    status, headers, body = await conn.request("POST", "/v1/compile", ADD_MODULE.encode(), "text/plain")
    if status != 200:
        raise SystemExit(f"soak: compiling the executed module: {status} {body[:200]!r}")
    state["add_key"] = headers["x-kiln-key"]
    conn.close()


async def run_once(args, state, run):
    state["run"] = run
    state["miss_counter"] = 0
    counts, errors, shed = collections.Counter(), collections.Counter(), collections.Counter()
    latencies = collections.defaultdict(list)
    cpu_before = cpu_seconds(args.pid)
    started = time.monotonic()
    deadline = started + args.seconds
    await asyncio.gather(*(worker(args.port, deadline, state, counts, errors, latencies, shed)
                           for _ in range(args.connections)))
    elapsed = time.monotonic() - started
    server_cpu = cpu_seconds(args.pid) - cpu_before
    await asyncio.sleep(args.settle)
    return counts, errors, shed, latencies, elapsed, server_cpu, rss_kib(args.pid)


def percentile(values, fraction):
    if not values:
        return 0.0
    values = sorted(values)
    return values[min(len(values) - 1, int(fraction * len(values)))]


async def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--pid", type=int, required=True, help="the kiln serve process, for its RSS")
    parser.add_argument("--seconds", type=float, default=60)
    parser.add_argument("--connections", type=int, default=256)
    parser.add_argument("--runs", type=int, default=2)
    parser.add_argument("--settle", type=float, default=3, help="idle seconds before reading the RSS")
    parser.add_argument("--max-rss-ratio", type=float, default=1.10)
    parser.add_argument("--db", help="the server's database file, for its size after each run")
    args = parser.parse_args()

    state = {}
    await prepare(args.port, state)
    print(f"soak: {args.connections} connections, {args.seconds:g} s per run, {args.runs} runs; mix "
          + ", ".join(f"{kind} {share:.0%}" for kind, share in MIX), flush=True)
    print(f"soak: RSS before the first run {rss_kib(args.pid) / 1024:.1f} MiB", flush=True)
    rss = []
    failed = False
    for run in range(1, args.runs + 1):
        counts, errors, shed, latencies, elapsed, server_cpu, run_rss = await run_once(args, state, run)
        total = sum(counts.values())
        unexpected = sum(errors.values())
        rss.append(run_rss)
        print(f"run {run}: requests {total} ({total / elapsed:.0f}/s; "
              + ", ".join(f"{kind} {counts[kind]}" for kind, _ in MIX)
              + f"), unexpected errors {unexpected}, shed and retried "
              + (", ".join(f"{n} {code}" for code, n in shed.items()) or "0")
              + f", server CPU {server_cpu * 1e6 / max(total, 1):.0f} us"
              f"/request, RSS {run_rss / 1024:.1f} MiB", flush=True)
        print("  latency ms p50/p99: " + ", ".join(
            f"{kind} {percentile(latencies[kind], 0.5) * 1000:.1f}/{percentile(latencies[kind], 0.99) * 1000:.1f}"
            for kind, _ in MIX))
        if args.db:
            print("  store: " + ", ".join(f"{os.path.basename(path)} {os.path.getsize(path) / 2**20:.1f} MiB"
                                          for path in (args.db, args.db + "-wal") if os.path.exists(path)))
        for reason, n in errors.most_common(10):
            print(f"  {n} x {reason}")
        failed |= unexpected > 0
    ratio = rss[-1] / rss[0]
    verdict = "ok" if ratio <= args.max_rss_ratio else f"over {args.max_rss_ratio:.2f}"
    print(f"RSS run {args.runs} / run 1: {ratio:.3f} ({verdict})")
    failed |= ratio > args.max_rss_ratio
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
