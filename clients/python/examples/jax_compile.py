"""Compile a jitted JAX function on kiln, run it on a simulated TPU, and check
the answer against JAX's own.

Written against JAX 0.7 (its jax/_src/stages.py): `jax.jit(f).lower(*args)
.as_text()` prints the lowered module as StableHLO, JAX's default, which kiln
reads as it comes; `as_text(dialect="hlo")` (HLO text) and the bytes of
`jax.export.export(jax.jit(f))(*args).mlir_module_serialized` (VHLO bytecode)
have the same key. The 0.4 series has the same calls. Runs on any JAX
backend, CPU included:

    pip install "jax[cpu]"                 # numpy comes with it
    build/tools/kiln serve &               # or set KILN_URL to a running server
    PYTHONPATH=clients/python python3 clients/python/examples/jax_compile.py

The inputs are explicit arrays, so the module's parameters are exactly x, w
and b, in the order f takes them.
"""

import os

import jax
import jax.numpy as jnp
import numpy as np

from kiln_client import KilnClient


def layer(x, w, b):
    return jnp.tanh(x @ w + b)


def main():
    x = (np.arange(8 * 16, dtype=np.float32) / 100).reshape(8, 16)
    w = np.linspace(-1, 1, 16 * 4, dtype=np.float32).reshape(16, 4)
    b = np.array([0.5, -0.5, 0.25, 0.0], dtype=np.float32)

    stablehlo_text = jax.jit(layer).lower(x, w, b).as_text()

    with KilnClient(os.environ.get("KILN_URL", "http://127.0.0.1:8470"),
                    token=os.environ.get("KILN_TOKEN")) as kiln:
        compiled = kiln.compile(stablehlo_text, chip="v5e")
        print(f"key {compiled.key}: {compiled.cache}, {compiled.kernels} kernels, "
              f"~{compiled.estimated_us:.2f} us on v5e")
        run = kiln.execute(compiled.key, [x, w, b])

    got = run.numpy()[0]
    expected = np.asarray(jax.jit(layer)(x, w, b))
    np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-5)
    print(f"outputs match JAX's; simulated device time {run.device_us:.2f} us")
    for kernel in run.kernels:
        print(f"  {kernel.name:24} {kernel.us:8.3f} us  {kernel.bound}")


if __name__ == "__main__":
    main()
