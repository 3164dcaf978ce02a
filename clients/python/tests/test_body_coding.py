"""Offline tests of when request bodies are compressed (kiln_client.body_coding).

A zlib stand-in codec checks the policy with the standard library alone; the
real zstd codec is checked where one is installed.
"""

import os
import sys
import unittest
import zlib
from types import SimpleNamespace
from unittest import mock

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

from kiln_client import body_coding, zstd  # noqa: E402
from kiln_client.body_coding import RequestCompressor, is_loopback  # noqa: E402

TEXT = b"".join(b"  c%d = f32[16,128]{1,0} constant({...})\n" % i for i in range(4000))


class Codec:
    def __init__(self):
        self.calls = 0

    def available(self):
        return True

    def compress(self, data, level=1):
        self.calls += 1
        return zlib.compress(data, 1)


class RequestCompressorTest(unittest.TestCase):
    def setUp(self):
        self.codec = Codec()
        patcher = mock.patch.object(body_coding, "zstd", self.codec)
        patcher.start()
        self.addCleanup(patcher.stop)

    def test_auto_compresses_large_compressible_bodies_off_loopback(self):
        compressor = RequestCompressor("auto", "kiln.internal")
        wire, coding = compressor.encode(TEXT)
        self.assertEqual((coding, zlib.decompress(wire)), ("zstd", TEXT))

    def test_auto_leaves_small_incompressible_and_loopback_bodies(self):
        compressor = RequestCompressor("auto", "10.0.0.7")
        self.assertEqual(compressor.encode(b"x" * 1000), (b"x" * 1000, None))
        noise = os.urandom(200 << 10)
        self.assertEqual(compressor.encode(noise), (noise, None))
        self.assertEqual(compressor.encode(None), (None, None))
        for host in ("127.0.0.1", "127.8.0.1", "::1", "[::1]", "localhost"):
            with self.subTest(host=host):
                self.assertEqual(RequestCompressor("auto", host).encode(TEXT), (TEXT, None))

    def test_always_and_never(self):
        self.assertEqual(RequestCompressor("always", "127.0.0.1").encode(TEXT)[1], "zstd")
        self.assertEqual(RequestCompressor("never", "10.0.0.7").encode(TEXT), (TEXT, None))
        with self.assertRaises(ValueError):
            RequestCompressor("sometimes", "10.0.0.7")

    def test_a_repeated_body_is_compressed_once(self):
        compressor = RequestCompressor("always", "10.0.0.7")
        first = compressor.encode(TEXT)
        calls = self.codec.calls
        self.assertEqual(compressor.encode(bytes(bytearray(TEXT))), first)  # equal, not the same object
        self.assertEqual(self.codec.calls, calls)

    def test_a_repeated_incompressible_body_is_not_tried_again(self):
        compressor = RequestCompressor("auto", "10.0.0.7")
        noise = os.urandom(100 << 10)
        compressor.encode(noise)
        calls = self.codec.calls
        self.assertEqual(compressor.encode(noise), (noise, None))
        self.assertEqual(self.codec.calls, calls)

    def test_kept_bodies_are_bounded(self):
        compressor = RequestCompressor("always", "10.0.0.7", keep_bodies=2, keep_bytes=1 << 30)
        bodies = [TEXT + bytes([i]) for i in range(3)]
        for body in bodies:
            compressor.encode(body)
        calls = self.codec.calls
        compressor.encode(bodies[2])
        compressor.encode(bodies[1])
        self.assertEqual(self.codec.calls, calls, "the two most recent are kept")
        compressor.encode(bodies[0])
        self.assertEqual(self.codec.calls, calls + 1, "the oldest was dropped")

    def test_always_needs_a_codec(self):
        with mock.patch.object(body_coding, "zstd", SimpleNamespace(available=lambda: False)):
            with self.assertRaisesRegex(ValueError, "python3-zstandard"):
                RequestCompressor("always", "10.0.0.7")
            self.assertFalse(RequestCompressor("auto", "10.0.0.7").active)


class LoopbackTest(unittest.TestCase):
    def test_names(self):
        self.assertTrue(is_loopback("127.0.0.1"))
        self.assertTrue(is_loopback("LOCALHOST"))
        self.assertFalse(is_loopback("10.0.0.1"))
        self.assertFalse(is_loopback("kiln.example.com"))


@unittest.skipUnless(zstd.available(), "no zstd codec (Python 3.14+ or python3-zstandard); "
                                       "tests/python_client_test.sh runs this with one")
class RealZstdTest(unittest.TestCase):
    def test_round_trip_and_bound(self):
        wire, coding = RequestCompressor("always", "10.0.0.7").encode(TEXT)
        self.assertEqual(coding, "zstd")
        self.assertLess(len(wire), len(TEXT) // 4)
        self.assertEqual(zstd.decompress(wire, len(TEXT)), TEXT)
        with self.assertRaises(ValueError):
            zstd.decompress(wire, len(TEXT) - 1)


if __name__ == "__main__":
    unittest.main()
