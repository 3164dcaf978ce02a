"""Offline tests of KilnClient's transport against a scripted local HTTP server.

The stub answers each request from a queue of canned answers and records what
it received, so these tests check what the client sends, keep-alive reuse,
the stale-connection retry and error mapping without a real kiln.
"""

import http.server
import json
import os
import socket
import sys
import threading
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

from kiln_client import KilnClient, KilnConnectionError, KilnError, Tensor, safetensors  # noqa: E402

KEY = "8509a329c0908e1bde360d54663719a7"


class Canned:
    def __init__(self, status=200, body=b"", content_type="application/json", headers=None,
                 close_silently=False):
        self.status = status
        self.body = json.dumps(body).encode() if isinstance(body, (dict, list)) else body
        self.content_type = content_type
        self.headers = headers or {}
        self.close_silently = close_silently  # drop the connection after answering, unannounced


class StubServer:
    def __init__(self):
        self.answers = []
        self.received = []  # (method, path, headers, body, connection id)
        self.connections = 0
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


class TransportTest(unittest.TestCase):
    def setUp(self):
        self.stub = StubServer()
        self.client = KilnClient(self.stub.url, token="s3cret")

    def tearDown(self):
        self.client.close()
        self.stub.stop()

    def test_requests_share_one_kept_alive_connection(self):
        self.stub.answers = [Canned(body=COMPILED), Canned(body={"status": "ok", "version": "x",
                                                                  "uptime_s": 1})]
        result = self.client.compile("HloModule m", chip="v5e")
        self.assertEqual((result.key, result.cache, result.compile_ms), (KEY, "miss", 2.5))
        self.assertEqual(self.client.health()["status"], "ok")
        (m1, p1, h1, b1, c1), (m2, p2, _, _, c2) = self.stub.received
        self.assertEqual((m1, p1, m2, p2), ("POST", "/v1/compile", "GET", "/healthz"))
        self.assertEqual(h1["Authorization"], "Bearer s3cret")
        self.assertEqual(json.loads(b1), {"hlo": "HloModule m", "chip": "v5e"})
        self.assertEqual(c1, c2, "the second request reused the connection")

    def test_a_connection_the_server_dropped_is_replaced_once(self):
        self.stub.answers = [Canned(body={"entries": [], "next_cursor": None}, close_silently=True),
                             Canned(body={"entries": [{"key": KEY}], "next_cursor": None})]
        self.assertEqual(self.client.entries().entries, [])
        self.assertEqual(self.client.entries(chip="v5e").entries, [{"key": KEY}])
        self.assertEqual([r[4] for r in self.stub.received], [1, 2])
        self.assertEqual(self.stub.received[1][1], "/v1/entries?chip=v5e")

    def test_error_answers_raise_kiln_errors(self):
        self.stub.answers = [
            Canned(400, {"error": {"code": "hlo_parse_error", "message": "3:13: expected ']'",
                                   "line": 3, "column": 13}}),
            Canned(503, {"error": {"code": "pool_saturated", "message": "full"}},
                   headers={"Retry-After": "3"}),
        ]
        with self.assertRaises(KilnError) as caught:
            self.client.compile("HloModule m")
        self.assertEqual((caught.exception.status, caught.exception.line, caught.exception.column),
                         (400, 3, 13))
        with self.assertRaises(KilnError) as caught:
            self.client.execute(KEY, [Tensor.from_values([1.0], "f32")])
        self.assertEqual((caught.exception.code, caught.exception.retry_after), ("pool_saturated", 3))

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
    def test_refused_connection(self):
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]  # closed when the block ends: nothing listens
        with self.assertRaises(KilnConnectionError) as caught:
            KilnClient(f"http://127.0.0.1:{port}", timeout=5).health()
        self.assertEqual(caught.exception.status, 0)

    def test_bad_base_url(self):
        with self.assertRaises(ValueError):
            KilnClient("ftp://host")


if __name__ == "__main__":
    unittest.main()
