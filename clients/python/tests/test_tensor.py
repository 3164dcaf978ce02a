"""Offline tests of kiln_client.Tensor: conversions and validation."""

import array
import math
import os
import struct
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

from kiln_client import Tensor  # noqa: E402
from kiln_client.tensor import as_tensor  # noqa: E402


class FromValuesTest(unittest.TestCase):
    def test_nested_lists_infer_the_shape_and_pack_little_endian(self):
        t = Tensor.from_values([[1, 2, 3], [4, 5, 6]], "f32")
        self.assertEqual(t.shape, (2, 3))
        self.assertEqual(t.data, struct.pack("<6f", 1, 2, 3, 4, 5, 6))
        self.assertEqual(t.type_string(), "f32[2,3]")

    def test_flat_values_with_an_explicit_shape(self):
        t = Tensor.from_values([1, 2, 3, 4, 5, 6], "s32", shape=(3, 2))
        self.assertEqual(t.tolist(), [[1, 2], [3, 4], [5, 6]])
        self.assertEqual(t.to_list(), [1, 2, 3, 4, 5, 6])

    def test_scalar(self):
        t = Tensor.from_values(2.5, "f64")
        self.assertEqual(t.shape, ())
        self.assertEqual(t.tolist(), 2.5)

    def test_every_dtype_round_trips(self):
        cases = {"pred": [True, False], "s8": [-128, 127], "s16": [-3, 3], "s32": [-7, 7],
                 "s64": [-(2 ** 40), 2 ** 40], "u8": [0, 255], "u16": [0, 65535],
                 "u32": [0, 2 ** 32 - 1], "u64": [0, 2 ** 64 - 1], "f16": [0.5, -2.0],
                 "bf16": [1.0, -0.25], "f32": [0.1, 3.0], "f64": [0.1, -1e300]}
        for dtype, values in cases.items():
            with self.subTest(dtype=dtype):
                t = Tensor.from_values(values, dtype)
                self.assertEqual(len(t.data), 2 * {"pred": 1, "s8": 1, "u8": 1, "s16": 2, "u16": 2,
                                                   "f16": 2, "bf16": 2, "s32": 4, "u32": 4,
                                                   "f32": 4}.get(dtype, 8))
                decoded = t.to_list()
                if dtype == "f32":
                    self.assertAlmostEqual(decoded[0], 0.1, places=6)
                else:
                    self.assertEqual(decoded, values)

    def test_bf16_rounds_to_nearest_even(self):
        # 1 + 2^-8 lies halfway between bf16 1.0 and 1 + 2^-7: ties go to the even 1.0.
        self.assertEqual(Tensor.from_values([1 + 2 ** -8], "bf16").to_list(), [1.0])
        # 1 + 3 * 2^-8 lies halfway between 1 + 2^-7 and 1 + 2^-6: even is 1 + 2^-6.
        self.assertEqual(Tensor.from_values([1 + 3 * 2 ** -8], "bf16").to_list(), [1 + 2 ** -6])
        # Just above a tie rounds up.
        self.assertEqual(Tensor.from_values([1 + 2 ** -8 + 2 ** -20], "bf16").to_list(), [1 + 2 ** -7])
        self.assertEqual(Tensor.from_values([1.0], "bf16").data, b"\x80\x3f")
        self.assertTrue(math.isnan(Tensor.from_values(["nan"], "bf16").to_list()[0]))

    def test_rejects_ragged_lists(self):
        with self.assertRaisesRegex(ValueError, r"ragged.*values\[1\]"):
            Tensor.from_values([[1, 2], [3]], "f32")

    def test_rejects_values_that_do_not_fill_the_shape(self):
        with self.assertRaisesRegex(ValueError, "5 values do not fill shape"):
            Tensor.from_values([1, 2, 3, 4, 5], "f32", shape=(2, 3))

    def test_rejects_out_of_range_and_non_integer_values(self):
        with self.assertRaisesRegex(ValueError, "do not fit u8"):
            Tensor.from_values([256], "u8")
        with self.assertRaisesRegex(ValueError, "element 1: 1.5 is not an integer"):
            Tensor.from_values([1, 1.5], "s32")
        with self.assertRaisesRegex(ValueError, "unknown dtype 'f8'"):
            Tensor.from_values([1], "f8")

    def test_rejects_data_of_the_wrong_length(self):
        with self.assertRaisesRegex(ValueError, r"f32\[2\]: needs 8 bytes of data, got 4"):
            Tensor("f32", (2,), b"\0" * 4)
        with self.assertRaisesRegex(ValueError, "non-negative"):
            Tensor("f32", (-1,), b"")


class ByteOnlyTypesTest(unittest.TestCase):
    def test_f8_decoding(self):
        e4m3 = Tensor("f8e4m3fn", (5,), bytes([0x38, 0x7E, 0x01, 0xB8, 0x7F])).to_list()
        self.assertEqual(e4m3[:4], [1.0, 448.0, 2.0 ** -9, -1.0])
        self.assertTrue(math.isnan(e4m3[4]))
        self.assertEqual(Tensor("f8e5m2", (3,), bytes([0x3C, 0x7C, 0xC0])).to_list(),
                         [1.0, math.inf, -2.0])

    def test_c64_decoding(self):
        t = Tensor("c64", (2,), struct.pack("<4f", 1, 2, -3, 0.5))
        self.assertEqual(t.to_list(), [complex(1, 2), complex(-3, 0.5)])

    def test_cannot_be_built_from_values_or_sent_as_json(self):
        with self.assertRaisesRegex(ValueError, "raw bytes"):
            Tensor.from_values([1.0], "f8e4m3fn")
        with self.assertRaisesRegex(ValueError, "only in safetensors"):
            Tensor("c64", (1,), b"\0" * 8).to_json()


class ConversionTest(unittest.TestCase):
    def test_array_round_trip(self):
        source = array.array("f", [1.5, -2.0, 3.25, 0.0])
        t = Tensor.from_array(source, shape=(2, 2))
        self.assertEqual((t.dtype, t.shape), ("f32", (2, 2)))
        self.assertEqual(t.to_array(), source)

    def test_array_of_platform_sized_long_is_refused(self):
        with self.assertRaisesRegex(ValueError, "typecode 'l'"):
            Tensor.from_array(array.array("l", [1]))

    def test_json_form_spells_special_floats(self):
        t = Tensor.from_values([1.0, math.inf, -math.inf, math.nan], "f32")
        form = t.to_json()
        self.assertEqual(form["data"][:3], [1.0, "inf", "-inf"])
        self.assertEqual(form["data"][3], "nan")
        back = Tensor.from_json(form)
        self.assertEqual(back.data, t.data)

    def test_from_json_requires_all_fields(self):
        with self.assertRaisesRegex(ValueError, "needs shape, dtype and data"):
            Tensor.from_json({"shape": [1], "data": [1]})

    def test_as_tensor_refuses_plain_lists(self):
        with self.assertRaisesRegex(TypeError, "Tensor.from_values"):
            as_tensor([1, 2, 3])


if __name__ == "__main__":
    unittest.main()
