"""Offline checks of schema/openapi.yaml and scripts/check_openapi_routes.py.

The spec must describe every route of the issue, each operation completely
(operationId, role, JSON error answers), and the route checker must catch a
served route the spec lacks. Needs PyYAML (Debian python3-yaml).
"""

import importlib.util
import io
import os
import tempfile
import unittest
from contextlib import redirect_stderr, redirect_stdout

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
SPEC = os.path.join(ROOT, "schema", "openapi.yaml")
CHECKER = os.path.join(ROOT, "scripts", "check_openapi_routes.py")

try:
    import yaml
except ImportError:
    yaml = None


def load_checker():
    spec = importlib.util.spec_from_file_location("check_openapi_routes", CHECKER)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# Every route the issue and DESIGN.md name, as the server registers them.
# Liveness, and the dashboard page (static; its API calls carry a token).
TOKENLESS_PATHS = ("/healthz", "/")

REQUIRED_ROUTES = """
POST /v1/compile
GET /v1/executables/{key}
HEAD /v1/executables/{key}
DELETE /v1/executables/{key}
POST /v1/executables/{key}/execute
POST /v1/executables/{key}/time
GET /v1/executables/{key}/trace
POST /v1/explain
GET /v1/stats
GET /v1/stats/history
GET /v1/entries
GET /v1/recompiles
GET /v1/pool
GET /metrics
GET /healthz
GET /
POST /v1/tune
GET /v1/tune
GET /v1/tune/{id}
DELETE /v1/tune/{id}
""".strip().splitlines()


@unittest.skipIf(yaml is None, "PyYAML is not installed (Debian: python3-yaml)")
class SpecTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        with open(SPEC, encoding="utf-8") as handle:
            cls.spec = yaml.safe_load(handle)
        cls.checker = load_checker()

    def operations(self):
        for path, item in self.spec["paths"].items():
            for method in self.checker.HTTP_METHODS:
                if method in item:
                    yield method.upper(), path, item[method]

    def test_every_required_route_is_described(self):
        served = self.checker.parse_routes(REQUIRED_ROUTES)
        described = self.checker.spec_operations(self.spec)
        missing, _, _ = self.checker.compare(served, described)
        self.assertEqual(missing, [])

    def test_operations_are_complete(self):
        ids = set()
        for method, path, op in self.operations():
            with self.subTest(route=f"{method} {path}"):
                self.assertIn("operationId", op)
                self.assertNotIn(op["operationId"], ids)
                ids.add(op["operationId"])
                self.assertIn(op.get("x-kiln-required-role"), ("none", "read", "compile", "admin"))
                codes = set(op["responses"])
                if path not in TOKENLESS_PATHS:
                    self.assertTrue({"401", "403"} <= codes or method == "HEAD",
                                    "needs the auth answers")
                if method != "HEAD":
                    self.assertIn("405", codes)

    def test_only_health_and_the_dashboard_page_need_no_token(self):
        for method, path, op in self.operations():
            self.assertEqual(op.get("security") == [], path in TOKENLESS_PATHS, f"{method} {path}")

    def test_error_answers_use_the_error_schema(self):
        responses = self.spec["components"]["responses"]
        for name, response in responses.items():
            with self.subTest(response=name):
                schema = response["content"]["application/json"]["schema"]
                self.assertEqual(schema, {"$ref": "#/components/schemas/Error"})

    def test_compile_result_has_the_issue_fields(self):
        fields = self.spec["components"]["schemas"]["CompileResult"]["required"]
        for name in ("key", "cache", "compile_ms", "kernels", "estimated_us"):
            self.assertIn(name, fields)
        self.assertEqual(self.spec["components"]["schemas"]["CacheOutcome"]["enum"],
                         ["hit", "miss", "joined"])


@unittest.skipIf(yaml is None, "PyYAML is not installed (Debian: python3-yaml)")
class RouteCheckerTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.checker = load_checker()

    def run_checker(self, routes, *flags):
        path = os.path.join(self.tmp, "routes.txt")
        with open(path, "w", encoding="utf-8") as handle:
            handle.write(routes)
        out, err = io.StringIO(), io.StringIO()
        with redirect_stdout(out), redirect_stderr(err):
            status = self.checker.main([*flags, SPEC, path])
        return status, out.getvalue() + err.getvalue()

    def setUp(self):
        self._tmp = tempfile.TemporaryDirectory()
        self.tmp = self._tmp.name

    def tearDown(self):
        self._tmp.cleanup()

    def test_a_served_route_missing_from_the_spec_fails(self):
        status, out = self.run_checker("POST /v1/compile\nPUT /v1/secret   # not described\n")
        self.assertEqual(status, 1)
        self.assertIn("MISSING from", out)
        self.assertIn("PUT /v1/secret", out)

    def test_parameter_names_and_head_fallback(self):
        routes = "GET|DELETE /v1/executables/{k}\nGET /healthz\n"
        status, out = self.run_checker(routes)
        self.assertEqual(status, 0, out)
        # HEAD /v1/executables/{key} is in the spec and covered by the GET route.
        self.assertNotIn("HEAD /v1/executables", out)

    def test_strict_fails_on_unserved_routes(self):
        status, out = self.run_checker("\n".join(REQUIRED_ROUTES), "--strict")
        self.assertEqual(status, 0, out)
        status, out = self.run_checker("POST /v1/compile\n", "--strict")
        self.assertEqual(status, 1)
        self.assertIn("ERROR: described but not served: GET /v1/stats", out)

    def test_contracts_must_match_the_spec_when_given(self):
        hlo = ("body=text/plain,application/json,application/x-www-form-urlencoded,"
               "application/octet-stream untyped-body")
        routes = (f"POST /v1/compile query=chip,plan,scoped_vmem_bytes,topology,arg_shapes,return {hlo}\n"
                  "GET /v1/entries query=chip,plan,sort,limit,cursor\nGET /v1/stats\n")
        status, out = self.run_checker(routes)
        self.assertEqual(status, 0, out)
        status, out = self.run_checker(
            f"POST /v1/compile query=chip,plans {hlo}\nGET /v1/stats query=verbose\n")
        self.assertEqual(status, 1, out)
        self.assertIn("POST /v1/compile: query parameters served but not in the spec: plans", out)
        self.assertIn("POST /v1/compile: query parameters in the spec but not served: "
                      "arg_shapes, plan, return, scoped_vmem_bytes, topology", out)
        self.assertIn("GET /v1/stats: query parameters served but not in the spec: verbose", out)
        status, out = self.run_checker("POST /v1/compile query=chip,plan,scoped_vmem_bytes,topology,arg_shapes,return "
                                       "body=text/plain\n")
        self.assertEqual(status, 1, out)
        self.assertIn("body types in the spec but not served: application/json", out)

    def test_bad_input(self):
        status, out = self.run_checker("compile everything\n")
        self.assertEqual(status, 2)
        self.assertIn("routes.txt:1: expected 'METHOD /path'", out)
        status, out = self.run_checker("GET /ok\nFETCH /x\n")
        self.assertEqual(status, 2)
        self.assertIn("routes.txt:2: unknown HTTP method 'FETCH'", out)
        self.assertEqual(self.run_checker("# nothing\n")[0], 2)


if __name__ == "__main__":
    unittest.main()
