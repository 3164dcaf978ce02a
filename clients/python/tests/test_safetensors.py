"""Offline tests of the safetensors codec, against hand-built files."""

import json
import os
import struct
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

from kiln_client import SafetensorsError, Tensor  # noqa: E402
from kiln_client import safetensors  # noqa: E402


def build(header, buffer):
    """A safetensors file from a header dict and raw buffer, without the module's encoder."""
    text = json.dumps(header).encode()
    return struct.pack("<Q", len(text)) + text + buffer


class EncodeTest(unittest.TestCase):
    def test_layout_matches_the_format(self):
        a = Tensor.from_values([[1, 2, 3], [4, 5, 6]], "f32")
        b = Tensor.from_values([7], "s64")
        data = safetensors.encode({"0": a, "1": b}, {"kiln.key": "abc"})
        (header_len,) = struct.unpack_from("<Q", data)
        self.assertEqual(header_len % 8, 0, "header is padded to 8 bytes")
        header = json.loads(data[8:8 + header_len])
        self.assertEqual(header["0"], {"dtype": "F32", "shape": [2, 3], "data_offsets": [0, 24]})
        self.assertEqual(header["1"], {"dtype": "I64", "shape": [1], "data_offsets": [24, 32]})
        self.assertEqual(header["__metadata__"], {"kiln.key": "abc"})
        self.assertEqual(data[8 + header_len:], a.data + b.data)

    def test_round_trip_keeps_tensors_and_metadata(self):
        tensors = {"0": Tensor.from_values([1.5, -2], "bf16"),
                   "1.0": Tensor.from_values([True, False, True], "pred"),
                   "1.1": Tensor.from_values([], "f32", shape=(0, 4))}
        decoded, metadata = safetensors.decode(safetensors.encode(tensors, {"a": "b"}))
        self.assertEqual(decoded, tensors)
        self.assertEqual(metadata, {"a": "b"})

    def test_rejects_non_string_metadata(self):
        with self.assertRaises(TypeError):
            safetensors.encode({}, {"device_us": 1.5})


class DecodeTest(unittest.TestCase):
    def test_reads_a_hand_built_file_in_offset_order(self):
        data = build({"b": {"dtype": "U16", "shape": [2], "data_offsets": [4, 8]},
                      "a": {"dtype": "I32", "shape": [], "data_offsets": [0, 4]}},
                     struct.pack("<i2H", -5, 1, 65535))
        tensors, metadata = safetensors.decode(data)
        self.assertEqual(list(tensors), ["a", "b"])
        self.assertEqual(tensors["a"].tolist(), -5)
        self.assertEqual(tensors["b"].to_list(), [1, 65535])
        self.assertEqual(metadata, {})

    def assert_rejected(self, data, pattern):
        with self.assertRaisesRegex(SafetensorsError, pattern):
            safetensors.decode(data)

    def test_rejects_truncated_files(self):
        self.assert_rejected(b"\x01\x00", "too short")
        self.assert_rejected(struct.pack("<Q", 100) + b"{}", "runs past the 10-byte file")
        self.assert_rejected(struct.pack("<Q", 1 << 40), "exceeds")

    def test_rejects_a_header_that_is_not_an_object(self):
        self.assert_rejected(build([1, 2], b""), "JSON list, expected an object")
        self.assert_rejected(struct.pack("<Q", 3) + b"{x}", "not valid JSON")

    def test_rejects_bad_entries(self):
        f32 = {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]}
        self.assert_rejected(build({"0": dict(f32, dtype="C128")}, b"\0" * 8), "unsupported dtype 'C128'")
        self.assert_rejected(build({"0": dict(f32, shape=[-2])}, b"\0" * 8), "non-negative")
        self.assert_rejected(build({"0": dict(f32, data_offsets=[0])}, b"\0" * 8), r"\[begin, end\]")
        self.assert_rejected(build({"0": dict(f32, data_offsets=[0, 16])}, b"\0" * 8),
                             "run past the 8-byte buffer")
        self.assert_rejected(build({"0": dict(f32, shape=[3])}, b"\0" * 8), "needs 12 bytes")

    def test_rejects_overlaps_holes_and_trailing_bytes(self):
        t = {"dtype": "U8", "shape": [2]}
        self.assert_rejected(build({"0": dict(t, data_offsets=[0, 2]), "1": dict(t, data_offsets=[1, 3])},
                                   b"\0" * 3), "overlaps")
        self.assert_rejected(build({"0": dict(t, data_offsets=[1, 3])}, b"\0" * 3), "unindexed")
        self.assert_rejected(build({"0": dict(t, data_offsets=[0, 2])}, b"\0" * 3), "belong to no tensor")

    def test_rejects_non_string_metadata(self):
        self.assert_rejected(build({"__metadata__": {"a": 1}}, b""), "strings to strings")


if __name__ == "__main__":
    unittest.main()
