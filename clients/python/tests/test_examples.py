"""Offline checks of the framework examples (examples/*.py) and README snippets.

JAX and torch_xla are not needed (nor installed where the tests run): the
checks are that each example parses, says which framework version it was
written against, calls only what kiln_client has, and builds its inputs
explicitly instead of drawing random numbers inside the traced graph.
"""

import ast
import os
import re
import sys
import unittest

HERE = os.path.join(os.path.dirname(__file__), "..")
sys.path.insert(0, HERE)

import kiln_client  # noqa: E402
from kiln_client import KilnClient  # noqa: E402

EXAMPLES = os.path.join(HERE, "examples")
RANDOM_CALLS = {"randn", "rand", "randint", "normal", "uniform", "PRNGKey", "key"}


def example_files():
    return sorted(os.path.join(EXAMPLES, name) for name in os.listdir(EXAMPLES) if name.endswith(".py"))


class ExamplesTest(unittest.TestCase):
    def test_there_is_one_per_framework(self):
        names = [os.path.basename(path) for path in example_files()]
        self.assertEqual(names, ["jax_compile.py", "torch_xla_compile.py"])

    def test_each_parses_and_names_its_versions(self):
        for path in example_files():
            with self.subTest(example=os.path.basename(path)):
                with open(path, encoding="utf-8") as handle:
                    tree = ast.parse(handle.read(), path)
                self.assertRegex(ast.get_docstring(tree), r"Written against (JAX|torch_xla) \d+\.\d+")

    def test_each_calls_only_what_the_client_has(self):
        for path in example_files():
            with self.subTest(example=os.path.basename(path)):
                with open(path, encoding="utf-8") as handle:
                    tree = ast.parse(handle.read(), path)
                for node in ast.walk(tree):
                    if isinstance(node, ast.ImportFrom) and node.module == "kiln_client":
                        for alias in node.names:
                            self.assertTrue(hasattr(kiln_client, alias.name), alias.name)
                    if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
                            and node.value.id == "kiln"):
                        self.assertTrue(hasattr(KilnClient, node.attr), f"KilnClient.{node.attr}")

    def test_inputs_are_explicit_not_random(self):
        for path in example_files():
            with self.subTest(example=os.path.basename(path)):
                with open(path, encoding="utf-8") as handle:
                    tree = ast.parse(handle.read(), path)
                called = {node.func.attr for node in ast.walk(tree)
                          if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)}
                self.assertEqual(called & RANDOM_CALLS, set())


class ReadmeTest(unittest.TestCase):
    def test_python_snippets_parse(self):
        with open(os.path.join(HERE, "README.md"), encoding="utf-8") as handle:
            blocks = re.findall(r"```python\n(.*?)```", handle.read(), re.S)
        self.assertGreaterEqual(len(blocks), 4)
        for i, block in enumerate(blocks):
            with self.subTest(block=i):
                ast.parse(block)


if __name__ == "__main__":
    unittest.main()
