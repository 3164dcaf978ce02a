"""End-to-end tests of KilnClient against a real `kiln serve`.

Set KILN_URL (e.g. http://127.0.0.1:8470) to run them; without it every test
here is skipped. Optional: KILN_TOKEN (a token with role admin when the server
has an --auth-file) and KILN_BIN (the kiln binary, default build/tools/kiln,
used to check that a compile answers the key `kiln fingerprint` prints).

The server's cache may hold entries from earlier runs: tests that need a miss
delete their key first, and modules that must be unique use random shapes.
"""

import http.client
import os
import random
import subprocess
import sys
import tempfile
import threading
import unittest
from urllib.parse import urlsplit

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

from kiln_client import KilnClient, KilnError, Tensor, zstd  # noqa: E402

URL = os.environ.get("KILN_URL")
TOKEN = os.environ.get("KILN_TOKEN")
ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
KILN_BIN = os.environ.get("KILN_BIN", os.path.join(ROOT, "build", "tools", "kiln"))
BOUNDS = {"compute", "memory", "overhead"}


def add_module(rows=2, cols=3):
    return f"""HloModule add_{rows}x{cols}, entry_computation_layout={{(f32[{rows},{cols}]{{1,0}}, f32[{rows},{cols}]{{1,0}})->f32[{rows},{cols}]{{1,0}}}}

ENTRY main {{
  x = f32[{rows},{cols}]{{1,0}} parameter(0)
  y = f32[{rows},{cols}]{{1,0}} parameter(1)
  ROOT sum = f32[{rows},{cols}]{{1,0}} add(x, y)
}}
"""


def negate_module(first_rows, a, b, c, d):
    """Three parameters; only the first one's shape is varied by the explain test."""
    return f"""HloModule negate3

ENTRY main {{
  p0 = f32[{first_rows},128] parameter(0)
  p1 = f32[{a},{b}] parameter(1)
  p2 = f32[{c},{d}] parameter(2)
  n0 = f32[{first_rows},128] negate(p0)
  n1 = f32[{a},{b}] negate(p1)
  n2 = f32[{c},{d}] negate(p2)
  ROOT t = (f32[{first_rows},128], f32[{a},{b}], f32[{c},{d}]) tuple(n0, n1, n2)
}}
"""


def scale_module(factor, width):
    """One parameter times a constant: the test varies only the constant."""
    return f"""HloModule scale_by_constant

ENTRY main {{
  p = f32[8,{width}] parameter(0)
  c = f32[] constant({factor})
  b = f32[8,{width}] broadcast(c), dimensions={{}}
  ROOT m = f32[8,{width}] multiply(p, b)
}}
"""


def chain_module(length):
    """A module of `length` adds: about 42 bytes of HLO text per add."""
    lines = [f"HloModule chain_{length}", "", "ENTRY main {", "  p0 = f32[8,128]{1,0} parameter(0)"]
    previous = "p0"
    for i in range(length):
        lines.append(f"  a{i} = f32[8,128]{{1,0}} add({previous}, p0)")
        previous = f"a{i}"
    lines += [f"  ROOT r = f32[8,128]{{1,0}} negate({previous})", "}", ""]
    return "\n".join(lines)


def metric(text, name):
    """The value of an unlabelled Prometheus series in `text`."""
    for line in text.splitlines():
        if line.startswith(name + " "):
            return float(line.split()[1])
    raise AssertionError(f"no series {name} in /metrics")


# Line 3, column 13: a space where ',' or ']' must be.
MALFORMED = "HloModule bad\nENTRY e {\n  p = f32[2 3] parameter(0)\n  ROOT n = f32[2,3] negate(p)\n}\n"


def fingerprint(hlo, chip):
    """What `kiln fingerprint --chip CHIP` prints for `hlo`, or None without the binary."""
    if not os.access(KILN_BIN, os.X_OK):
        return None
    with tempfile.NamedTemporaryFile("w", suffix=".hlo", delete=False) as handle:
        handle.write(hlo)
    try:
        out = subprocess.run([KILN_BIN, "fingerprint", "--chip", chip, handle.name],
                             capture_output=True, text=True, check=True, timeout=60)
    finally:
        os.unlink(handle.name)
    return out.stdout.split()[0]


@unittest.skipUnless(URL, "set KILN_URL to the address of a running `kiln serve` "
                          "(e.g. KILN_URL=http://127.0.0.1:8470) to run the end-to-end client tests")
class ServerTest(unittest.TestCase):
    def setUp(self):
        self.kiln = KilnClient(URL, token=TOKEN, timeout=120)

    def tearDown(self):
        self.kiln.close()

    def fresh_key(self, hlo, chip=None):
        """Compiles `hlo` and deletes it, so the next compile must miss; returns the key."""
        key = self.kiln.compile(hlo, chip=chip).key
        self.kiln.delete(key)
        return key

    # ---- compile ---------------------------------------------------------

    def test_health_needs_no_token(self):
        with KilnClient(URL) as client:
            health = client.health()
        self.assertEqual(health["status"], "ok")

    def test_compile_misses_then_hits_with_the_fingerprint_key(self):
        hlo = add_module()
        key = self.fresh_key(hlo)
        first = self.kiln.compile(hlo)
        second = self.kiln.compile(hlo)
        self.assertEqual((first.key, first.cache), (key, "miss"))
        self.assertEqual((second.key, second.cache), (key, "hit"))
        self.assertEqual(second.compile_ms, 0)
        self.assertTrue(second.fast_path, "an identical body takes the fast path")
        self.assertGreaterEqual(first.kernels, 1)
        self.assertGreater(first.estimated_us, 0)
        self.assertRegex(key, "^[0-9a-f]{32}$")
        expected = fingerprint(hlo, "v5e")
        if expected is not None:
            self.assertEqual(key, expected)

    def test_a_large_module_misses_then_hits_on_the_fast_path(self):
        # 1.2 MB of HLO text: more than the server hashes on its loop thread.
        hlo = chain_module(30000 + random.randint(0, 999))
        key = self.fresh_key(hlo)
        first = self.kiln.compile(hlo)
        hits = [self.kiln.compile(hlo) for _ in range(3)]
        self.assertEqual((first.key, first.cache), (key, "miss"))
        for hit in hits:
            self.assertEqual((hit.key, hit.cache, hit.fast_path), (key, "hit", True))
        expected = fingerprint(hlo, "v5e")
        if expected is not None:
            self.assertEqual(key, expected)

    @unittest.skipUnless(zstd.available(), "no zstd codec (Python 3.14+ or python3-zstandard); "
                                           "tests/python_client_test.sh runs this with one")
    def test_a_zstd_compressed_module_compiles_and_hits(self):
        hlo = chain_module(3000 + random.randint(0, 999))
        with KilnClient(URL, token=TOKEN, timeout=120, compress_requests="always") as client:
            key = client.compile(hlo).key
            client.delete(key)
            first, second = client.compile(hlo), client.compile(hlo)
            explained = client.explain(hlo)
        self.assertEqual((first.key, first.cache), (key, "miss"))
        self.assertEqual((second.key, second.cache, second.fast_path), (key, "hit", True))
        self.assertTrue(explained.cached)
        self.assertEqual(key, self.kiln.compile(hlo).key, "the same key as the plain body")

    def test_options_go_in_the_query(self):
        hlo = add_module(3, 5)
        none = self.kiln.compile(hlo, chip="v6e", options={"plan": "none"})
        heuristic = self.kiln.compile(hlo, chip="v6e", options={"plan": "heuristic", "scoped_vmem_bytes": 0})
        self.assertEqual((none.chip, none.plan), ("v6e", "none"))
        self.assertEqual((heuristic.chip, heuristic.plan), ("v6e", "heuristic"))
        self.assertNotEqual(none.key, heuristic.key)
        with self.assertRaises(KilnError) as caught:
            self.kiln.compile(hlo, options={"plann": "none"})
        self.assertEqual((caught.exception.status, caught.exception.code), (400, "invalid_options"))
        self.assertIn("plann", caught.exception.message)

    def test_one_connection_serves_every_call(self):
        hlo = add_module()
        x = Tensor.from_values([[1, 2, 3], [4, 5, 6]], "f32")
        with KilnClient(URL, token=TOKEN, timeout=120) as client:
            before = metric(client.metrics(), "kiln_http_accepted_connections_total")
            key = client.compile(hlo).key
            client.compile(hlo)
            client.execute(key, [x, x])
            client.explain(hlo)
            client.stats()
            after = metric(client.metrics(), "kiln_http_accepted_connections_total")
        self.assertEqual(after, before, "no new connection after the first")

    def test_the_chip_is_part_of_the_key(self):
        hlo = add_module()
        v6e = self.kiln.compile(hlo, chip="v6e")
        self.assertEqual(v6e.chip, "v6e")
        self.assertNotEqual(v6e.key, self.kiln.compile(hlo, chip="v5e").key)
        expected = fingerprint(hlo, "v6e")
        if expected is not None:
            self.assertEqual(v6e.key, expected)

    def test_concurrent_compiles_of_one_key_share_one_compile(self):
        hlo = add_module(256, 512)
        key = self.fresh_key(hlo)
        results, errors = [], []

        def compile_once():
            try:
                with KilnClient(URL, token=TOKEN, timeout=120) as client:
                    results.append(client.compile(hlo))
            except KilnError as error:
                errors.append(error)

        threads = [threading.Thread(target=compile_once) for _ in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        self.assertEqual(errors, [])
        self.assertEqual({r.key for r in results}, {key})
        outcomes = sorted(r.cache for r in results)
        self.assertEqual(outcomes.count("miss"), 1, outcomes)
        self.assertTrue(set(outcomes) <= {"miss", "joined", "hit"}, outcomes)

    def test_malformed_hlo_is_400_with_line_and_column(self):
        with self.assertRaises(KilnError) as caught:
            self.kiln.compile(MALFORMED)
        error = caught.exception
        self.assertEqual((error.status, error.code), (400, "hlo_parse_error"))
        self.assertEqual((error.line, error.column), (3, 13))
        self.assertIn("3:13", error.message)

    # ---- executables -----------------------------------------------------

    def test_fetch_head_and_delete(self):
        hlo = add_module(4, 4)
        blob = self.kiln.compile_executable(hlo)
        self.assertGreater(len(blob), 0)
        self.assertIn(blob.cache, ("hit", "miss", "joined"))
        fetched = self.kiln.get_executable(blob.key)
        self.assertEqual(bytes(fetched), bytes(blob))
        self.assertTrue(self.kiln.exists(blob.key))
        entry = self.kiln.entry(blob.key)
        self.assertEqual((entry["key"], entry["chip"]), (blob.key, "v5e"))

        self.kiln.delete(blob.key)
        self.assertFalse(self.kiln.exists(blob.key))
        for call in (self.kiln.get_executable, self.kiln.delete):
            with self.assertRaises(KilnError) as caught:
                call(blob.key)
            self.assertEqual((caught.exception.status, caught.exception.code), (404, "not_found"))

    def test_stablehlo_as_jax_lowers_it_compiles_and_runs(self):
        # What jax.jit(lambda x, y: (x + y) * x).lower(x, y).as_text() prints.
        stablehlo = ('module @jit_f attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {\n'
                     '  func.func public @main(%arg0: tensor<4xf32>, %arg1: tensor<4xf32>) -> '
                     '(tensor<4xf32> {jax.result_info = ""}) {\n'
                     '    %0 = stablehlo.add %arg0, %arg1 : tensor<4xf32>\n'
                     '    %1 = stablehlo.multiply %0, %arg0 : tensor<4xf32>\n'
                     '    return %1 : tensor<4xf32>\n  }\n}\n')
        compiled = self.kiln.compile(stablehlo, chip="v5e")
        self.assertRegex(compiled.key, "^[0-9a-f]{32}$")
        self.assertEqual(self.kiln.compile(stablehlo.encode(), chip="v5e").key, compiled.key)
        run = self.kiln.execute(compiled.key, [Tensor.from_values([1, 2, 3, 4], "f32"),
                                               Tensor.from_values([10, 20, 30, 40], "f32")])
        self.assertEqual(run.outputs[0].tolist(), [11, 44, 99, 176])

    def test_execute_in_safetensors_and_json(self):
        key = self.kiln.compile(add_module()).key
        x = Tensor.from_values([[1, 2, 3], [4, 5, 6]], "f32")
        y = Tensor.from_values([[10, 20, 30], [40, 50, 60]], "f32")
        for form in ("safetensors", "json"):
            with self.subTest(form=form):
                run = self.kiln.execute(key, [x, y], form=form)
                self.assertEqual(len(run.outputs), 1)
                self.assertEqual(run.outputs[0].tolist(), [[11, 22, 33], [44, 55, 66]])
                self.assertGreater(run.device_us, 0)
                self.assertGreaterEqual(len(run.kernels), 1)
                for kernel in run.kernels:
                    self.assertIn(kernel.bound, BOUNDS)
                    self.assertGreaterEqual(kernel.us, 0)
                self.assertAlmostEqual(sum(k.us for k in run.kernels), run.device_us, places=3)

    def test_execute_with_a_wrong_shape_is_422_naming_the_parameter(self):
        key = self.kiln.compile(add_module()).key
        x = Tensor.from_values([[1, 2, 3], [4, 5, 6]], "f32")
        wrong = Tensor.from_values([[1, 2], [3, 4], [5, 6]], "f32")
        with self.assertRaises(KilnError) as caught:
            self.kiln.execute(key, [x, wrong])
        self.assertEqual((caught.exception.status, caught.exception.code), (422, "input_mismatch"))
        self.assertEqual(caught.exception.parameter, "1")
        with self.assertRaises(KilnError) as caught:
            self.kiln.execute(key, [x, Tensor.from_values([[1, 2, 3], [4, 5, 6]], "s32")])
        self.assertEqual((caught.exception.status, caught.exception.parameter), (422, "1"))

    def test_time_and_trace_without_values(self):
        key = self.kiln.compile(add_module()).key
        timed = self.kiln.time(key)
        self.assertEqual(timed["key"], key)
        self.assertGreater(timed["device_us"], 0)
        run = self.kiln.execute(key, [Tensor.from_values([[1, 2, 3], [4, 5, 6]], "f32")] * 2)
        self.assertAlmostEqual(run.device_us, timed["device_us"], places=3)  # execute answers 6 digits
        events = [e for e in self.kiln.trace(key)["traceEvents"] if e["ph"] == "X"]
        self.assertEqual(len(events), len(timed["kernels"]))
        with self.assertRaises(KilnError) as caught:
            self.kiln.time("0" * 32)
        self.assertEqual(caught.exception.status, 404)

    def test_recompiles_name_the_changing_dimension(self):
        dims = [random.randint(2, 60) for _ in range(4)]
        client = f"job-{random.randint(0, 10**9)}/host-0"
        with KilnClient(URL, token=TOKEN, client_name=client) as named:
            for rows in (16, 17, 33):
                named.compile(negate_module(rows, *dims))
        report = self.kiln.recompiles(name="negate3", min_keys=3)
        mine = [m for m in report["modules"] if client in m["clients"]]
        self.assertEqual(len(mine), 1, report)
        self.assertIn({"parameter": 0, "dimension": 0, "values": [16, 17, 33]}, mine[0]["changing_dimensions"])
        self.assertTrue(mine[0]["storm"])

    def test_execute_of_an_unknown_key_is_404(self):
        with self.assertRaises(KilnError) as caught:
            self.kiln.execute("0" * 32, [Tensor.from_values([1.0], "f32")])
        self.assertEqual(caught.exception.status, 404)

    # ---- explain ---------------------------------------------------------

    def test_explain_names_the_differing_parameter(self):
        dims = [random.randint(2, 60) for _ in range(4)]
        cached = self.kiln.compile(negate_module(16, *dims))
        explained = self.kiln.explain(negate_module(17, *dims))
        self.assertFalse(explained.cached)
        self.assertEqual(explained.nearest_key, cached.key)
        first = explained.differences[0]
        self.assertEqual(first.component, "parameter 0")
        self.assertEqual((first.request, first.nearest), ("f32[17,128]", "f32[16,128]"))
        self.assertIn("f32[17,128]", first.message)
        self.assertIn("f32[16,128]", first.message)

        same = self.kiln.explain(negate_module(16, *dims))
        self.assertTrue(same.cached)
        self.assertEqual((same.key, same.differences), (cached.key, []))

    def test_explain_of_a_changed_constant_says_which_instruction(self):
        # The README's loop: a probe found it printing "entry body None vs
        # None" for a constant change; each difference says itself, and the
        # instruction behind "entry body" is in `changes`.
        scale, width = random.randint(2, 10 ** 6), random.randint(2, 10 ** 6)  # width: this run's own entry
        self.kiln.compile(scale_module(scale, width))
        explained = self.kiln.explain(scale_module(scale + 1, width))
        self.assertFalse(explained.cached)
        self.assertTrue(explained.differences)
        for difference in explained.differences:
            self.assertTrue(difference.message)
            self.assertNotIn("None", difference.message)
        constants = [c for c in explained.changes if str(scale + 1) in (c.get("request") or "")]
        self.assertTrue(constants, explained.changes)
        self.assertIn(str(scale), constants[0].get("cached") or "")

    # ---- observation -----------------------------------------------------

    def test_stats_count_hits(self):
        hlo = add_module()
        self.kiln.compile(hlo)
        before = self.kiln.stats()
        self.kiln.compile(hlo)
        after = self.kiln.stats()
        self.assertGreaterEqual(after["entries"], 1)
        self.assertEqual(after["compiles"]["hits"], before["compiles"]["hits"] + 1)
        self.assertGreaterEqual(after["compiles"]["requests"], before["compiles"]["requests"] + 1)

    def test_entries_are_paged_and_filtered(self):
        key = self.kiln.compile(add_module()).key
        keys = [entry["key"] for entry in self.kiln.iter_entries(chip="v5e", page_size=1)]
        self.assertIn(key, keys)
        self.assertEqual(len(keys), len(set(keys)), "pages do not overlap")
        self.assertLessEqual(len(self.kiln.entries(limit=1).entries), 1)
        self.assertNotIn(key, [e["key"] for e in self.kiln.iter_entries(chip="v4")])

    def test_pool(self):
        pool = self.kiln.pool()
        self.assertGreaterEqual(len(pool["chips"]), 1)
        for chip in pool["chips"]:
            self.assertIn(chip["kind"], ("v4", "v5e", "v5p", "v6e", "tpu7x"))
            self.assertIsInstance(chip["busy"], bool)
            self.assertTrue(0 <= chip["utilization"] <= 1)
        self.assertGreaterEqual(pool["queue_depth"], 0)

    def test_metrics(self):
        self.kiln.health()
        self.assertIn("kiln_http_requests_total", self.kiln.metrics())

    # ---- protocol errors -------------------------------------------------

    def raw(self, method, path):
        parts = urlsplit(URL)
        connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=30)
        headers = {"Authorization": f"Bearer {TOKEN}"} if TOKEN else {}
        try:
            connection.request(method, parts.path.rstrip("/") + path, headers=headers)
            response = connection.getresponse()
            return response.status, dict(response.getheaders()), response.read()
        finally:
            connection.close()

    def test_wrong_method_is_405_with_allow(self):
        status, headers, body = self.raw("PUT", "/v1/compile")
        self.assertEqual(status, 405)
        self.assertIn("POST", headers.get("Allow", ""))
        self.assertIn(b'"method_not_allowed"', body)

    def test_unknown_route_is_404(self):
        status, _, body = self.raw("GET", "/v1/nothing-here")
        self.assertEqual(status, 404)
        self.assertIn(b'"code"', body)


if __name__ == "__main__":
    unittest.main()
