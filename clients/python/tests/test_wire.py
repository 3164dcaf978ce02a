"""Offline tests of request building and answer decoding (kiln_client.wire, errors, results)."""

import json
import os
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

from kiln_client import KilnError, KilnProtocolError, Tensor, safetensors, wire  # noqa: E402
from kiln_client.errors import error_from_response  # noqa: E402
from kiln_client.results import CompileResult, ExplainResult  # noqa: E402

HLO = "HloModule m\n\nENTRY e {\n  ROOT p = f32[2] parameter(0)\n}\n"
KEY = "8509a329c0908e1bde360d54663719a7"


class CompileRequestTest(unittest.TestCase):
    def test_the_hlo_text_is_the_body_and_the_rest_is_in_the_query(self):
        request = wire.compile_request(HLO, "v6e", {"scoped_vmem_bytes": 1024, "plan": "none"})
        self.assertEqual((request.method, request.path),
                         ("POST", "/v1/compile?chip=v6e&plan=none&scoped_vmem_bytes=1024"))
        self.assertEqual(request.headers["Content-Type"], "text/plain")
        self.assertEqual(request.body, HLO.encode())
        self.assertTrue(request.idempotent, "a compile is idempotent by key")

    def test_bytes_go_verbatim_and_text_as_utf8(self):
        raw = b"HloModule m\n// \xc3\xa9\n"
        self.assertIs(wire.compile_request(raw).body, raw)
        self.assertEqual(wire.compile_request(raw.decode()).body, raw)
        self.assertEqual(wire.compile_request(bytearray(raw)).body, raw)

    def test_stablehlo_text_goes_as_text_and_bytecode_as_binary(self):
        stablehlo = "module @jit_f {\n  func.func public @main(%arg0: tensor<2xf32>) -> tensor<2xf32> {\n" \
                    "    return %arg0 : tensor<2xf32>\n  }\n}\n"
        request = wire.compile_request(stablehlo, "v5e")
        self.assertEqual(request.headers["Content-Type"], "text/plain")
        self.assertEqual(request.body, stablehlo.encode())
        bytecode = b"ML\xefR\x0dStableHLO_v1.9.0\x00\x01\x02"
        request = wire.compile_request(bytecode, "v5e", {"plan": "none"})
        self.assertEqual(request.headers["Content-Type"], "application/octet-stream")
        self.assertEqual((request.path, request.body), ("/v1/compile?chip=v5e&plan=none", bytecode))
        self.assertEqual(wire.explain_request(bytecode).headers["Content-Type"], "application/octet-stream")

    def test_arg_shapes_go_in_the_query_or_the_json_body(self):
        request = wire.compile_request(HLO, "v5e", arg_shapes=["s64[]", "f32[8,4]"])
        self.assertEqual(request.path, "/v1/compile?chip=v5e&arg_shapes=s64%5B%5D%2Cf32%5B8%2C4%5D")
        request = wire.compile_request(HLO, "v5e", {"fuse": True}, arg_shapes="s64[],f32[8,4]")
        self.assertEqual(json.loads(request.body)["arg_shapes"], "s64[],f32[8,4]")
        self.assertIn("arg_shapes=", wire.explain_request(HLO, arg_shapes="f32[2]").path)
        with self.assertRaises(TypeError):
            wire.compile_request(HLO, arg_shapes=[1, 2])

    def test_bytecode_never_goes_in_a_json_body(self):
        bytecode = b"ML\xefR\x0dStableHLO_v1.9.0\x00"
        with self.assertRaisesRegex(ValueError, "MLIR bytecode cannot travel in a JSON body"):
            wire.compile_request(bytecode, "v5e", {"plan": "none", "fuse": True})
        with self.assertRaisesRegex(ValueError, "MLIR bytecode cannot travel in a JSON body"):
            wire.tune_request(hlo=bytecode, max_trials=4)
        self.assertEqual(json.loads(wire.tune_request(hlo=HLO.encode(), max_trials=4).body)["hlo"], HLO)

    def test_defaults_are_left_to_the_server(self):
        request = wire.compile_request(HLO.encode())
        self.assertEqual(request.path, "/v1/compile")
        self.assertEqual(request.headers["Accept"], "application/json")

    def test_return_executable(self):
        request = wire.compile_request(HLO, "v5p", return_executable=True)
        self.assertEqual(request.path, "/v1/compile?chip=v5p&return=executable")
        self.assertEqual(request.headers["Accept"], "application/vnd.kiln.executable")
        self.assertEqual(request.body, HLO.encode())

    def test_options_the_query_cannot_say_go_as_json(self):
        # The server names an unknown option or a wrongly typed one: the JSON form
        # carries them as given instead of the client guessing.
        for options in ({"plan": "none", "fuse": True}, {"scoped_vmem_bytes": "1k"},
                        {"scoped_vmem_bytes": True}):
            with self.subTest(options=options):
                request = wire.compile_request(HLO, "v6e", options, return_executable=True)
                self.assertEqual(request.path, "/v1/compile?return=executable")
                self.assertEqual(request.headers["Content-Type"], "application/json")
                self.assertEqual(json.loads(request.body), {"hlo": HLO, "chip": "v6e", "options": options})

    def test_json_body_is_canonical(self):
        body = wire.json_compile_body(HLO, "v6e", {"scoped_vmem_bytes": 1024, "plan": "none"})
        self.assertEqual(body, wire.json_compile_body(HLO, "v6e", {"plan": "none", "scoped_vmem_bytes": 1024}))
        self.assertNotIn(b": ", body)

    def test_rejects_unknown_chips_and_bad_types(self):
        with self.assertRaisesRegex(ValueError, "unknown chip 'v9'"):
            wire.compile_request(HLO, "v9")
        with self.assertRaises(TypeError):
            wire.compile_request(42)
        with self.assertRaises(TypeError):
            wire.compile_request(HLO, options="plan=none")

    def test_explain_takes_the_compile_form(self):
        request = wire.explain_request(HLO, "v5p", {"plan": "given"})
        self.assertEqual(request.path, "/v1/explain?chip=v5p&plan=given")
        self.assertEqual(request.body, HLO.encode())


class OtherRequestsTest(unittest.TestCase):
    def test_key_is_escaped_into_one_segment(self):
        self.assertEqual(wire.get_executable_request(KEY).path, f"/v1/executables/{KEY}")
        self.assertEqual(wire.delete_executable_request("../stats").path, "/v1/executables/..%2Fstats")
        self.assertEqual(wire.head_executable_request(KEY).method, "HEAD")
        self.assertFalse(wire.delete_executable_request(KEY).idempotent, "a repeated delete answers 404")
        self.assertEqual(wire.get_executable_request(KEY, as_json=True).headers["Accept"],
                         "application/json")
        with self.assertRaises(ValueError):
            wire.get_executable_request("")

    def test_entries_query(self):
        self.assertEqual(wire.entries_request().path, "/v1/entries")
        self.assertEqual(wire.entries_request(chip="v5e", limit=5, cursor="a b").path,
                         "/v1/entries?chip=v5e&limit=5&cursor=a+b")


class ExecuteRequestTest(unittest.TestCase):
    def test_safetensors_inputs_are_named_by_position_and_tuple_leaf(self):
        a = Tensor.from_values([1, 2], "f32")
        b = Tensor.from_values([3], "s32")
        c = Tensor.from_values([True], "pred")
        request = wire.execute_request(KEY, [a, (b, (c,))])
        self.assertEqual(request.path, f"/v1/executables/{KEY}/execute")
        self.assertEqual(request.headers["Content-Type"], "application/vnd.safetensors")
        tensors, _ = safetensors.decode(request.body)
        self.assertEqual(tensors, {"0": a, "1.0": b, "1.1.0": c})

    def test_json_inputs(self):
        request = wire.execute_request(KEY, [Tensor.from_values([[1, 2]], "f32"),
                                             (Tensor.from_values(7, "s32"),)], form="json")
        self.assertEqual(json.loads(request.body), {"inputs": [
            {"shape": [1, 2], "dtype": "f32", "data": [1.0, 2.0]},
            {"tuple": [{"shape": [], "dtype": "s32", "data": [7]}]}]})

    def test_rejects_bad_inputs(self):
        with self.assertRaises(TypeError):
            wire.execute_request(KEY, Tensor.from_values([1], "f32"))
        with self.assertRaises(TypeError):
            wire.execute_request(KEY, [[1.0, 2.0]])
        with self.assertRaisesRegex(ValueError, "form"):
            wire.execute_request(KEY, [], form="xml")


class ParseExecuteTest(unittest.TestCase):
    KERNELS = [{"name": "sum", "us": 1.5, "bound": "memory", "flops": 6, "bytes": 72}]

    def test_safetensors_answer_with_profile_in_metadata(self):
        out0 = Tensor.from_values([11, 22], "f32")
        out1 = Tensor.from_values([1], "s32")
        body = safetensors.encode({"1.0": out1, "0": out0},
                                  {"kiln.device_us": "1.5", "kiln.device": "v5e:1",
                                   "kiln.key": KEY, "kiln.kernels": json.dumps(self.KERNELS)})
        result = wire.parse_execute(wire.Answer(200, {"content-type": "application/vnd.safetensors"}, body))
        self.assertEqual(result.outputs, [out0, [out1]])
        self.assertEqual((result.device_us, result.device, result.key), (1.5, "v5e:1", KEY))
        self.assertEqual(result.kernels[0].bound, "memory")
        self.assertEqual(result.kernels[0].bytes, 72)

    def test_safetensors_answer_without_metadata_reads_the_headers(self):
        # X-Kiln-Profile is a summary (the kernel list rides in the body):
        # it is not read as a kernel list.
        body = safetensors.encode({"0": Tensor.from_values([1], "f32")})
        headers = {"content-type": "application/vnd.safetensors", "x-kiln-device-us": "2.25",
                   "x-kiln-profile": "kernels=1; memory=1 2.25us"}
        result = wire.parse_execute(wire.Answer(200, headers, body))
        self.assertEqual(result.device_us, 2.25)
        self.assertEqual(result.kernels, [])

    def test_json_answer(self):
        body = json.dumps({"key": KEY, "chip": "v5e", "device": "v5e:0", "device_us": 3, "queue_ms": 0,
                           "wall_ms": 1, "kernels": self.KERNELS,
                           "outputs": [{"shape": [1], "dtype": "f32", "data": ["nan"]},
                                       {"tuple": [{"shape": [], "dtype": "u8", "data": [4]}]}]})
        result = wire.parse_execute(wire.Answer(200, {"content-type": "application/json"}, body.encode()))
        self.assertNotEqual(result.outputs[0].to_list()[0], result.outputs[0].to_list()[0])  # NaN
        self.assertEqual(result.outputs[1][0].tolist(), 4)
        self.assertEqual(result.device_us, 3.0)

    def test_bad_answers_raise_protocol_errors(self):
        with self.assertRaisesRegex(KilnProtocolError, "numbered"):
            wire.nest_values({"0": Tensor.from_values([1], "f32"), "2": Tensor.from_values([1], "f32")})
        with self.assertRaisesRegex(KilnProtocolError, "device_us is not a number"):
            wire.parse_execute(wire.Answer(200, {"content-type": "application/vnd.safetensors"},
                                           safetensors.encode({})))
        with self.assertRaisesRegex(KilnProtocolError, "Content-Type 'text/html'"):
            wire.parse_execute(wire.Answer(200, {"content-type": "text/html"}, b""))


class ErrorTest(unittest.TestCase):
    def test_hlo_error_carries_line_and_column(self):
        body = json.dumps({"error": {"code": "hlo_parse_error", "message": "3:13: expected ']'",
                                     "line": 3, "column": 13}}).encode()
        error = error_from_response(400, {}, body, "POST /v1/compile")
        self.assertIsInstance(error, KilnError)
        self.assertEqual((error.status, error.code, error.line, error.column), (400, "hlo_parse_error", 3, 13))
        self.assertIn("3:13", str(error))

    def test_input_mismatch_and_retry_after(self):
        body = json.dumps({"error": {"code": "input_mismatch", "message": "m", "parameter": "1",
                                     "expected": "f32[2,3]", "got": "f32[3,2]"}}).encode()
        error = error_from_response(422, {"retry-after": "2"}, body, "POST x")
        self.assertEqual((error.parameter, error.expected, error.got, error.retry_after),
                         ("1", "f32[2,3]", "f32[3,2]", 2))

    def test_non_json_error_bodies(self):
        error = error_from_response(404, {}, b"", "HEAD /v1/executables/x")
        self.assertEqual((error.code, error.message), ("http_404", "HEAD /v1/executables/x: (no body)"))
        error = error_from_response(502, {}, b"<html>bad gateway</html>", "GET /v1/stats")
        self.assertEqual(error.code, "http_502")
        self.assertIn("bad gateway", error.message)


class ResultsTest(unittest.TestCase):
    def test_compile_result(self):
        result = CompileResult.from_json({"key": KEY, "cache": "hit", "chip": "v5e", "plan": "heuristic",
                                          "compile_ms": 0, "kernels": 3, "estimated_us": 4.5,
                                          "fast_path": True})
        self.assertEqual((result.key, result.cache, result.kernels, result.fast_path), (KEY, "hit", 3, True))

    def test_compile_result_missing_field(self):
        with self.assertRaisesRegex(KilnProtocolError, "field 'kernels'"):
            CompileResult.from_json({"key": KEY, "cache": "hit", "chip": "v5e", "plan": "heuristic",
                                     "compile_ms": 0, "kernels": True, "estimated_us": 1})

    def test_explain_result(self):
        result = ExplainResult.from_json({
            "key": KEY, "cached": False, "components": [], "message": "miss",
            "nearest": {"key": "0" * 32, "chip": "v5e"},
            "differences": [{"component": "parameter 0", "request": "f32[17,128]",
                             "nearest": "f32[16,128]", "message": "parameter 0 is f32[17,128]"}]})
        self.assertEqual(result.nearest_key, "0" * 32)
        self.assertEqual(result.differences[0].nearest, "f32[16,128]")
        self.assertIsNone(ExplainResult.from_json({"key": KEY, "cached": True, "nearest": None,
                                                   "differences": [], "message": "hit"}).nearest_key)


if __name__ == "__main__":
    unittest.main()
