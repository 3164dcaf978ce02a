"""A standard-library client for kiln, the XLA HLO compile cache.

    from kiln_client import KilnClient, Tensor
    kiln = KilnClient("http://127.0.0.1:8470")
    compiled = kiln.compile(hlo_text, chip="v5e")
    run = kiln.execute(compiled.key, [Tensor.from_values([[1, 2, 3]], "f32")])

See README.md beside this package and schema/openapi.yaml for the API.
"""

from .client import DEFAULT_URL, KilnClient
from .errors import KilnConnectionError, KilnError, KilnProtocolError
from .retry import NO_RETRIES, RetryPolicy
from .results import (CompileResult, Difference, EntryPage, ExecutableBytes, ExecuteResult,
                      ExplainResult, KernelProfile)
from .safetensors import SafetensorsError
from .tensor import DTYPES, Tensor

__all__ = [
    "DEFAULT_URL", "DTYPES", "CompileResult", "Difference", "EntryPage", "ExecutableBytes",
    "ExecuteResult", "ExplainResult", "KernelProfile", "KilnClient", "KilnConnectionError",
    "KilnError", "KilnProtocolError", "NO_RETRIES", "RetryPolicy", "SafetensorsError", "Tensor",
]
