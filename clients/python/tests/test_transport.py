"""Offline tests of KilnClient's transport against a scripted local HTTP server.

The stub answers each request from a queue of canned answers and records what
it received, so these tests check what the client sends (raw HLO bodies,
compression), keep-alive reuse, reconnecting, retries and error mapping
without a real kiln.
"""

import http.server
import json
import os
import socket
import ssl
import sys
import threading
import time
import unittest
import zlib
from types import SimpleNamespace
from unittest import mock

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

from kiln_client import (KilnClient, KilnConnectionError, KilnError, RetryPolicy, Tensor,  # noqa: E402
                         client as client_module, safetensors, zstd)

KEY = "8509a329c0908e1bde360d54663719a7"


class Canned:
    def __init__(self, status=200, body=b"", content_type="application/json", headers=None,
                 close_silently=False, drop=False, delay_s=0):
        self.status = status
        self.body = json.dumps(body).encode() if isinstance(body, (dict, list)) else body
        self.content_type = content_type
        self.headers = headers or {}
        self.close_silently = close_silently  # drop the connection after answering, unannounced
        self.drop = drop                      # close the connection instead of answering
        self.delay_s = delay_s                # wait this long before answering


class StubServer:
    def __init__(self):
        self.answers = []
        self.received = []  # (method, path, headers, body, connection id)
        self.connections = 0
        self.closed = threading.Semaphore(0)  # released as a close_silently answer's FIN goes out
        stub = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def setup(self):
                super().setup()
                stub.connections += 1
                self.connection_id = stub.connections

            def handle_one(self):
                length = int(self.headers.get("Content-Length", 0))
                body = self.rfile.read(length) if length else b""
                stub.received.append((self.command, self.path, dict(self.headers), body,
                                      self.connection_id))
                canned = stub.answers.pop(0)
                if canned.drop:
                    self.close_connection = True
                    return
                time.sleep(canned.delay_s)
                self.send_response(canned.status)
                self.send_header("Content-Type", canned.content_type)
                self.send_header("Content-Length", str(len(canned.body)))
                for name, value in canned.headers.items():
                    self.send_header(name, value)
                self.end_headers()
                if self.command != "HEAD":
                    self.wfile.write(canned.body)
                if canned.close_silently:
                    self.close_connection = True
                    self.wfile.flush()
                    self.connection.shutdown(socket.SHUT_WR)
                    stub.closed.release()

            do_GET = do_POST = do_HEAD = do_DELETE = handle_one

            def log_message(self, *args):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever,
                                       kwargs={"poll_interval": 0.05}, daemon=True)
        self.thread.start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"

    def stop(self):
        self.server.shutdown()
        self.server.server_close()


COMPILED = {"key": KEY, "cache": "miss", "chip": "v5e", "plan": "heuristic", "compile_ms": 2.5,
            "kernels": 1, "estimated_us": 1.9, "fast_path": False}


HLO = "HloModule m\n\nENTRY e {\n  ROOT p = f32[2] parameter(0)\n}\n"
# A module large enough to be worth compressing (64 KiB or more) that compresses well.
LARGE_HLO = "HloModule big\n\nENTRY e {\n" + "".join(
    f"  c{i} = f32[16,128]{{1,0}} constant({{...}})\n" for i in range(4000)) + "}\n"


def fake_zstd():
    """A stand-in codec (zlib) for the compression policy, counting compressions;
    the real zstd codec is tested where one is installed."""
    calls = []

    def compress(data, level=1):
        calls.append(len(data))
        return zlib.compress(data, 1)
    return SimpleNamespace(available=lambda: True, compress=compress, calls=calls)


class TransportTest(unittest.TestCase):
    def setUp(self):
        self.stub = StubServer()
        self.client = KilnClient(self.stub.url, token="s3cret")
        self.sleeps = []
        patcher = mock.patch.object(client_module, "_sleep", self.sleeps.append)
        patcher.start()
        self.addCleanup(patcher.stop)

    def tearDown(self):
        self.client.close()
        self.stub.stop()

    def test_a_compile_sends_the_hlo_text_as_the_body(self):
        self.stub.answers = [Canned(body=COMPILED)]
        result = self.client.compile(HLO, chip="v6e", options={"plan": "given"})
        self.assertEqual((result.key, result.cache, result.compile_ms), (KEY, "miss", 2.5))
        method, path, headers, body, _ = self.stub.received[0]
        self.assertEqual((method, path), ("POST", "/v1/compile?chip=v6e&plan=given"))
        self.assertEqual(body, HLO.encode())
        self.assertEqual(headers["Content-Type"], "text/plain")
        self.assertNotIn("Content-Encoding", headers)
        self.assertEqual(headers["Authorization"], "Bearer s3cret")

    def test_requests_share_one_kept_alive_connection(self):
        out = safetensors.encode({"0": Tensor.from_values([2.0], "f32")}, {"kiln.device_us": "1"})
        self.stub.answers = [Canned(body=COMPILED), Canned(body=COMPILED),
                             Canned(200, out, "application/vnd.safetensors"),
                             Canned(body={"status": "ok", "version": "x", "uptime_s": 1})]
        self.client.compile(HLO)
        self.client.compile(HLO)
        self.client.execute(KEY, [Tensor.from_values([1.0], "f32")])
        self.assertEqual(self.client.health()["status"], "ok")
        self.assertEqual([r[0] + " " + r[1].split("?")[0] for r in self.stub.received],
                         ["POST /v1/compile", "POST /v1/compile", f"POST /v1/executables/{KEY}/execute",
                          "GET /healthz"])
        self.assertEqual({r[4] for r in self.stub.received}, {1}, "every request on the first connection")
        self.assertEqual(self.stub.connections, 1)

    def test_a_connection_the_server_closed_is_replaced_before_sending(self):
        # Even a delete, which is never sent twice, goes on a new connection
        # when the server closed the kept one while it was idle.
        self.stub.answers = [Canned(body={"entries": [], "next_cursor": None}, close_silently=True),
                             Canned(204, b"")]
        self.assertEqual(self.client.entries().entries, [])
        self.assertTrue(self.stub.closed.acquire(timeout=10))
        self.client.delete(KEY)
        self.assertEqual([(r[0], r[4]) for r in self.stub.received], [("GET", 1), ("DELETE", 2)])

    def test_a_503_with_retry_after_is_retried_after_waiting(self):
        self.stub.answers = [
            Canned(503, {"error": {"code": "overloaded", "message": "busy"}}, headers={"Retry-After": "2"}),
            Canned(503, {"error": {"code": "pool_saturated", "message": "full"}}, headers={"Retry-After": "1"}),
            Canned(body=COMPILED)]
        self.assertEqual(self.client.compile(HLO).key, KEY)
        self.assertEqual(len(self.stub.received), 3)
        self.assertEqual([r[3] for r in self.stub.received], [HLO.encode()] * 3)
        self.assertEqual(len(self.sleeps), 2)
        self.assertGreaterEqual(self.sleeps[0], 2, "waits at least Retry-After")
        self.assertGreaterEqual(self.sleeps[1], 1)

    def test_a_400_is_not_retried(self):
        self.stub.answers = [Canned(400, {"error": {"code": "hlo_parse_error", "message": "3:13: expected ']'",
                                                    "line": 3, "column": 13}})]
        with self.assertRaises(KilnError) as caught:
            self.client.compile("HloModule m")
        self.assertEqual((caught.exception.status, caught.exception.line, caught.exception.column),
                         (400, 3, 13))
        self.assertEqual((len(self.stub.received), self.sleeps, caught.exception.attempts), (1, [], 1))

    def test_503s_stop_after_the_policy_s_attempts(self):
        client = KilnClient(self.stub.url, retry=RetryPolicy(max_attempts=3, first_delay_s=0.5))
        self.addCleanup(client.close)
        busy = {"error": {"code": "pool_saturated", "message": "the v5e run queue is full"}}
        self.stub.answers = [Canned(503, busy, headers={"Retry-After": "1"}) for _ in range(3)]
        with self.assertRaises(KilnError) as caught:
            client.execute(KEY, [Tensor.from_values([1.0], "f32")])
        error = caught.exception
        self.assertEqual((error.status, error.code, error.retry_after, error.attempts),
                         (503, "pool_saturated", 1, 3))
        self.assertIn("after 3 attempts", str(error))
        self.assertEqual(len(self.stub.received), 3)
        self.assertEqual(len(self.sleeps), 2)

    def test_a_retry_after_past_the_time_budget_is_not_waited_for(self):
        client = KilnClient(self.stub.url, retry=RetryPolicy(max_total_s=30))
        self.addCleanup(client.close)
        self.stub.answers = [Canned(503, {"error": {"code": "draining", "message": "shutting down"}},
                                    headers={"Retry-After": "120"})]
        with self.assertRaises(KilnError) as caught:
            client.compile(HLO)
        self.assertEqual((caught.exception.code, caught.exception.retry_after), ("draining", 120))
        self.assertEqual((len(self.stub.received), self.sleeps), (1, []))

    def test_a_lost_answer_is_asked_again_only_when_repeating_is_safe(self):
        self.stub.answers = [Canned(drop=True), Canned(body=COMPILED)]
        self.assertEqual(self.client.compile(HLO).key, KEY)
        self.assertEqual([r[4] for r in self.stub.received], [1, 2])

        self.stub.answers = [Canned(drop=True)]
        with self.assertRaises(KilnConnectionError):
            self.client.delete(KEY)  # it may have been deleted: a second try would say 404
        self.assertEqual([r[0] for r in self.stub.received], ["POST", "POST", "DELETE"])

    def test_an_answer_that_times_out_is_not_retried(self):
        client = KilnClient(self.stub.url, timeout=0.2)
        self.addCleanup(client.close)
        self.stub.answers = [Canned(body=COMPILED, delay_s=1)]
        with self.assertRaisesRegex(KilnConnectionError, "no answer .* within 0.2 s"):
            client.compile(HLO)
        self.assertEqual((len(self.stub.received), self.sleeps), (1, []))

    def test_a_large_body_is_sent_compressed_when_asked(self):
        codec = fake_zstd()
        with mock.patch("kiln_client.body_coding.zstd", codec):
            client = KilnClient(self.stub.url, compress_requests=True)
        self.addCleanup(client.close)
        self.stub.answers = [Canned(body=COMPILED), Canned(body=COMPILED), Canned(body=COMPILED)]
        with mock.patch("kiln_client.body_coding.zstd", codec):
            client.compile(LARGE_HLO)
            client.compile(LARGE_HLO)
            client.compile(HLO)
        (_, path, headers, body, _), (_, _, _, again, _), (_, _, small_headers, small, _) = self.stub.received
        self.assertEqual(path, "/v1/compile")
        self.assertEqual(headers["Content-Encoding"], "zstd")
        self.assertEqual(headers["Content-Type"], "text/plain")
        self.assertEqual(zlib.decompress(body), LARGE_HLO.encode())
        self.assertLess(len(body), len(LARGE_HLO) // 4)
        self.assertEqual(again, body)
        self.assertEqual(codec.calls, [len(LARGE_HLO)], "the repeated module was compressed once")
        self.assertNotIn("Content-Encoding", small_headers, "a small body goes as it is")
        self.assertEqual(small, HLO.encode())

    def test_every_request_names_its_client(self):
        self.stub.answers = [Canned(body=COMPILED), Canned(body=COMPILED)]
        with mock.patch.dict(os.environ, {"KILN_CLIENT": "job-42/host-3"}):
            named_by_environment = KilnClient(self.stub.url)
        self.addCleanup(named_by_environment.close)
        named_by_environment.compile(HLO)
        named = KilnClient(self.stub.url, client_name="trainer/worker-0")
        self.addCleanup(named.close)
        named.compile(HLO)
        self.assertEqual(self.stub.received[0][2]["X-Kiln-Client"], "job-42/host-3")
        self.assertEqual(self.stub.received[1][2]["X-Kiln-Client"], "trainer/worker-0")
        with mock.patch.dict(os.environ, {}, clear=True):
            self.assertRegex(client_module.default_client_name(), r"^[^/]+/\d+$")
        with self.assertRaises(ValueError):
            KilnClient(self.stub.url, client_name="x" * 201)
        with self.assertRaises(ValueError):
            KilnClient(self.stub.url, client_name="bad\nname")

    def test_auto_compression_leaves_loopback_bodies_alone(self):
        with mock.patch("kiln_client.body_coding.zstd", fake_zstd()):
            client = KilnClient(self.stub.url)  # auto, on 127.0.0.1
            self.addCleanup(client.close)
            self.stub.answers = [Canned(body=COMPILED)]
            client.compile(LARGE_HLO)
        headers, body = self.stub.received[0][2:4]
        self.assertNotIn("Content-Encoding", headers)
        self.assertEqual(body, LARGE_HLO.encode())

    @unittest.skipUnless(zstd.available(), "no zstd codec (Python 3.14+ or python3-zstandard); "
                                           "tests/python_client_test.sh runs this with one")
    def test_compressed_bodies_are_real_zstd_frames(self):
        client = KilnClient(self.stub.url, compress_requests="always")
        self.addCleanup(client.close)
        self.stub.answers = [Canned(body=COMPILED)]
        client.compile(LARGE_HLO)
        headers, body = self.stub.received[0][2:4]
        self.assertEqual(headers["Content-Encoding"], "zstd")
        self.assertEqual(zstd.decompress(body, 1 << 30), LARGE_HLO.encode())

    def test_always_compressing_without_a_codec_is_refused(self):
        with mock.patch("kiln_client.body_coding.zstd", SimpleNamespace(available=lambda: False)):
            with self.assertRaisesRegex(ValueError, "zstd"):
                KilnClient(self.stub.url, compress_requests=True)
            # Without a codec, the default sends every body as it is.
            client = KilnClient("http://10.1.2.3:8470")
        self.assertFalse(client._compressor.active)

    def test_exists_and_delete(self):
        self.stub.answers = [Canned(200, b"", "application/vnd.kiln.executable"),
                             Canned(404, b""), Canned(204, b"")]
        self.assertTrue(self.client.exists(KEY))
        self.assertFalse(self.client.exists(KEY))
        self.client.delete(KEY)
        self.assertEqual([r[0] for r in self.stub.received], ["HEAD", "HEAD", "DELETE"])

    def test_executable_bytes_carry_their_key(self):
        self.stub.answers = [Canned(200, b"\x01\x02\x03", "application/vnd.kiln.executable",
                                    headers={"X-Kiln-Key": KEY, "X-Kiln-Cache": "hit"})]
        blob = self.client.compile_executable("HloModule m")
        self.assertEqual((bytes(blob), blob.key, blob.cache), (b"\x01\x02\x03", KEY, "hit"))
        self.assertEqual(self.stub.received[0][1], "/v1/compile?return=executable")

    def test_execute_round_trip_in_safetensors(self):
        out = Tensor.from_values([[2.0, 4.0]], "f32")
        answer = safetensors.encode({"0": out}, {"kiln.device_us": "0.5", "kiln.kernels": "[]"})
        self.stub.answers = [Canned(200, answer, "application/vnd.safetensors")]
        result = self.client.execute(KEY, [Tensor.from_values([[1.0, 2.0]], "f32")])
        self.assertEqual((result.outputs, result.device_us), ([out], 0.5))
        sent, _ = safetensors.decode(self.stub.received[0][3])
        self.assertEqual(sent["0"].to_list(), [1.0, 2.0])

    def test_json_endpoint_answering_html_is_a_protocol_error(self):
        self.stub.answers = [Canned(200, b"<html></html>", "text/html")]
        with self.assertRaisesRegex(KilnError, "expected JSON"):
            self.client.stats()


class ConnectionFailureTest(unittest.TestCase):
    def test_refused_connection_is_retried_then_reported(self):
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]  # closed when the block ends: nothing listens
        sleeps = []
        client = KilnClient(f"http://127.0.0.1:{port}", timeout=5, retry=RetryPolicy(max_attempts=3))
        with mock.patch.object(client_module, "_sleep", sleeps.append):
            with self.assertRaisesRegex(KilnConnectionError, "cannot connect") as caught:
                client.health()
        self.assertEqual((caught.exception.status, caught.exception.attempts, len(sleeps)), (0, 3, 2))
        self.assertLessEqual(sleeps[0], sleeps[1], "waits grow")

    def test_a_name_that_does_not_resolve_or_tls_refused_is_not_retried(self):
        # A probe found a DNS failure and a TLS mismatch each retried five
        # times; neither mends by waiting.
        for error in (socket.gaierror(socket.EAI_NONAME, "Name or service not known"),
                      ssl.SSLError(1, "[SSL: WRONG_VERSION_NUMBER] wrong version number")):
            sleeps = []
            client = KilnClient("http://kiln.example:8470", timeout=5, retry=RetryPolicy(max_attempts=5))
            with mock.patch.object(client_module, "_sleep", sleeps.append), \
                 mock.patch("http.client.HTTPConnection.connect", side_effect=error):
                with self.assertRaisesRegex(KilnConnectionError, "cannot connect") as caught:
                    client.health()
            self.assertEqual((caught.exception.attempts, sleeps), (1, []), type(error).__name__)

    def test_bad_base_url(self):
        with self.assertRaises(ValueError):
            KilnClient("ftp://host")


if __name__ == "__main__":
    unittest.main()
