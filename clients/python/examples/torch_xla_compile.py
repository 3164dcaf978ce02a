"""Compile a PyTorch/XLA graph on kiln, run it on a simulated TPU, and check
the answer against torch_xla's own.

Written against torch_xla 2.8: `torch_xla.device()` and `torch_xla.sync()`
(both since 2.4; before that `xm.xla_device()` and `xm.mark_step()`), and the
debugging hook `torch_xla._XLAC._get_xla_tensors_hlo(tensors)`, which prints
the HLO of the pending graph computing `tensors` without running it. Runs on
the CPU backend as well as on a TPU VM:

    pip install torch torch_xla            # numpy comes with torch
    build/tools/kiln serve &               # or set KILN_URL to a running server
    PJRT_DEVICE=CPU PYTHONPATH=clients/python python3 clients/python/examples/torch_xla_compile.py

To send whole training steps instead, have torch_xla save every graph it
runs (XLA_SAVE_TENSORS_FILE=graphs.txt XLA_SAVE_TENSORS_FMT=hlo) and feed
the file to `kiln prewarm`.
"""

import os

import torch
import torch_xla

from kiln_client import KilnClient


def main():
    device = torch_xla.device()
    # Inputs with explicit values, made on the CPU and copied to the device:
    # there they are device data, which the graph takes as parameters.
    # (torch.randn(..., device=device) would put the random-number ops and
    # their seed into the graph instead.)
    x_cpu = (torch.arange(8 * 16, dtype=torch.float32) / 100).reshape(8, 16)
    w_cpu = torch.linspace(-1, 1, 16 * 4, dtype=torch.float32).reshape(16, 4)
    x, w = x_cpu.to(device), w_cpu.to(device)
    torch_xla.sync()  # nothing pending before the graph we want: x and w are plain data

    y = torch.tanh(x @ w)  # traced, not run
    hlo_text = torch_xla._XLAC._get_xla_tensors_hlo([y])

    # torch_xla numbers the parameters in the order the graph reaches its
    # device data: x, then w. (A wrong order is answered 422, naming the
    # parameter and the shape it expected.)
    with KilnClient(os.environ.get("KILN_URL", "http://127.0.0.1:8470"),
                    token=os.environ.get("KILN_TOKEN")) as kiln:
        compiled = kiln.compile(hlo_text, chip="v5e")
        print(f"key {compiled.key}: {compiled.cache}, {compiled.kernels} kernels, "
              f"~{compiled.estimated_us:.2f} us on v5e")
        run = kiln.execute(compiled.key, [x_cpu.numpy(), w_cpu.numpy()])

    # torch_xla's graph returns a tuple of its outputs; kiln answers one output
    # per element, so y is output 0.
    got = run.numpy()[0]
    expected = y.cpu()  # runs the graph on the local XLA device
    torch.testing.assert_close(torch.from_numpy(got), expected, rtol=1e-4, atol=1e-5)
    print(f"outputs match torch_xla's; simulated device time {run.device_us:.2f} us")


if __name__ == "__main__":
    main()
