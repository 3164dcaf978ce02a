"""What goes over the wire: building requests and decoding answers.

Pure functions with no I/O, so every request the client sends can be checked
without a server. `Request` is a plain value; `Answer` is what the transport
hands back (headers with lower-case names, the decoded body).

Naming of execute inputs and outputs (see schema/openapi.yaml): value i is
named "i"; a tuple value's leaves are "i.0", "i.1", ... (nested "i.1.0").
"""

import json
from dataclasses import dataclass, field
from urllib.parse import quote, urlencode

from . import safetensors
from .errors import KilnProtocolError
from .results import ExecuteResult, KernelProfile
from .tensor import Tensor, as_tensor

SAFETENSORS_TYPE = "application/vnd.safetensors"
EXECUTABLE_TYPE = "application/vnd.kiln.executable"
JSON_TYPE = "application/json"
HLO_TYPE = "text/plain"
# MLIR bytecode (a VHLO portable artifact: jax.export's serialized module,
# torch_xla's get_stablehlo_bytecode()) goes as binary.
BYTECODE_TYPE = "application/octet-stream"
MLIR_BYTECODE_MAGIC = b"ML\xefR"
CHIPS = ("v4", "v5e", "v5p", "v6e", "tpu7x")
# Compile options a raw HLO body can carry in the query, with their types.
QUERY_OPTIONS = {"plan": str, "scoped_vmem_bytes": int}


@dataclass
class Request:
    method: str
    path: str                      # with the query, relative to the API root: "/v1/entries?limit=5"
    headers: dict = field(default_factory=dict)
    body: bytes | None = None
    # Safe to send again when the answer was lost (see retry.py); False for
    # requests that may change something twice (delete, start tuning).
    idempotent: bool = True

    def describe(self):
        return f"{self.method} {self.path.split('?', 1)[0]}"


@dataclass
class Answer:
    status: int
    headers: dict                  # lower-case names
    body: bytes

    def json(self, what):
        try:
            return json.loads(self.body)
        except ValueError as error:
            raise KilnProtocolError(self.status, f"{what}: answer is not JSON: {error}") from None


def hlo_bytes(hlo):
    """The module as the bytes sent: a str (HLO text, or StableHLO text as
    `jax.jit(f).lower(...).as_text()` prints it) is UTF-8 encoded; bytes (text,
    or MLIR bytecode as `jax.export` serializes it) go verbatim. The server
    tells the three apart by content."""
    if isinstance(hlo, str):
        return hlo.encode("utf-8")
    if isinstance(hlo, (bytes, bytearray, memoryview)):
        return bytes(hlo)
    raise TypeError(f"the module must be str or bytes (HLO text, StableHLO text or MLIR bytecode), "
                    f"got {type(hlo).__name__}")


def is_mlir_bytecode(body):
    return body.startswith(MLIR_BYTECODE_MAGIC)


def _json_module(hlo, carries):
    """The module as a JSON string field; MLIR bytecode, being binary, cannot be one."""
    module = hlo_bytes(hlo)
    if is_mlir_bytecode(module):
        raise ValueError(f"MLIR bytecode cannot travel in a JSON body; {carries}")
    return module.decode("utf-8")


def _check_chip(chip):
    if chip is not None and chip not in CHIPS:
        raise ValueError(f"unknown chip {chip!r}; expected one of {', '.join(CHIPS)}")


def _query_options(options):
    """The options as query parameters, or None when one has no query parameter
    (then the JSON form carries them, and the server names what it refuses)."""
    if not options:
        return []
    if not isinstance(options, dict):
        raise TypeError(f"options must be a dict, got {type(options).__name__}")
    query = []
    for name in sorted(options):
        kind = QUERY_OPTIONS.get(name)
        value = options[name]
        if kind is None or not isinstance(value, kind) or isinstance(value, bool):
            return None
        query.append((name, str(value)))
    return query


def arg_shapes_text(arg_shapes):
    """The entry's argument shapes as the server reads them: "s64[],f32[8,4]"
    from that string or from a sequence of shape strings."""
    if arg_shapes is None:
        return None
    if isinstance(arg_shapes, str):
        return arg_shapes
    if isinstance(arg_shapes, (list, tuple)) and all(isinstance(a, str) for a in arg_shapes):
        return ",".join(arg_shapes)
    raise TypeError(f"arg_shapes must be a str like 's64[],f32[8,4]' or a list of shape strings, "
                    f"got {type(arg_shapes).__name__}")


def json_compile_body(hlo, chip=None, options=None, arg_shapes=None):
    """The JSON compile/explain body (CompileRequest). Keys are sorted so that an
    identical request is byte-identical and takes the server's fast path."""
    body = {"hlo": _json_module(hlo, "pass only options the query can carry "
                                     f"({', '.join(sorted(QUERY_OPTIONS))}) or send the module as text")}
    _check_chip(chip)
    if chip is not None:
        body["chip"] = chip
    if options:
        if not isinstance(options, dict):
            raise TypeError(f"options must be a dict, got {type(options).__name__}")
        body["options"] = options
    shapes = arg_shapes_text(arg_shapes)
    if shapes is not None:
        body["arg_shapes"] = shapes
    return json.dumps(body, sort_keys=True, separators=(",", ":")).encode("utf-8")


def _hlo_request(path, hlo, chip, options, extra_query, accept, arg_shapes=None):
    """A compile or explain request: the module itself as the body, chip,
    options and argument shapes in the query (schema/openapi.yaml: ChipQuery,
    PlanQuery, ScopedVmemBytesQuery, ArgShapesQuery). Options the query cannot
    say go as JSON instead."""
    _check_chip(chip)
    options_query = _query_options(options)
    if options_query is None:
        query = list(extra_query)
        return Request("POST", path + ("?" + urlencode(query) if query else ""),
                       {"Content-Type": JSON_TYPE, "Accept": accept},
                       json_compile_body(hlo, chip, options, arg_shapes))
    shapes = arg_shapes_text(arg_shapes)
    query = ([("chip", chip)] if chip is not None else []) + options_query + \
        ([("arg_shapes", shapes)] if shapes is not None else []) + list(extra_query)
    body = hlo_bytes(hlo)
    content_type = BYTECODE_TYPE if is_mlir_bytecode(body) else HLO_TYPE
    return Request("POST", path + ("?" + urlencode(query) if query else ""),
                   {"Content-Type": content_type, "Accept": accept}, body)


def compile_request(hlo, chip=None, options=None, return_executable=False, arg_shapes=None):
    if return_executable:
        return _hlo_request("/v1/compile", hlo, chip, options, [("return", "executable")],
                            EXECUTABLE_TYPE, arg_shapes)
    return _hlo_request("/v1/compile", hlo, chip, options, [], JSON_TYPE, arg_shapes)


def explain_request(hlo, chip=None, options=None, arg_shapes=None):
    return _hlo_request("/v1/explain", hlo, chip, options, [], JSON_TYPE, arg_shapes)


def executable_path(key):
    if not isinstance(key, str) or not key:
        raise ValueError(f"key must be a non-empty string, got {key!r}")
    return "/v1/executables/" + quote(key, safe="")


def get_executable_request(key, as_json=False):
    return Request("GET", executable_path(key), {"Accept": JSON_TYPE if as_json else EXECUTABLE_TYPE})


def head_executable_request(key):
    return Request("HEAD", executable_path(key))


def delete_executable_request(key):
    return Request("DELETE", executable_path(key), idempotent=False)


def time_request(key):
    return Request("POST", executable_path(key) + "/time", {"Accept": JSON_TYPE})


def trace_request(key):
    return Request("GET", executable_path(key) + "/trace", {"Accept": JSON_TYPE})


def recompiles_request(name=None, min_keys=None):
    query = {n: v for n, v in (("name", name), ("min_keys", min_keys)) if v is not None}
    return Request("GET", "/v1/recompiles" + ("?" + urlencode(query) if query else ""), {"Accept": JSON_TYPE})


def entries_request(chip=None, plan=None, sort=None, limit=None, cursor=None):
    query = {name: value for name, value in
             (("chip", chip), ("plan", plan), ("sort", sort), ("limit", limit), ("cursor", cursor))
             if value is not None}
    path = "/v1/entries" + ("?" + urlencode(query) if query else "")
    return Request("GET", path, {"Accept": JSON_TYPE})


def get_request(path, accept=JSON_TYPE):
    return Request("GET", path, {"Accept": accept})


def tune_request(key=None, max_trials=None, time_budget_s=None, hlo=None, chip=None, seed=None):
    body = {}
    if hlo is not None:
        hlo = _json_module(hlo, "tune its key (compile it first) or send the module as text")
    for field, value in (("key", key), ("hlo", hlo), ("chip", chip), ("max_trials", max_trials),
                         ("time_budget_s", time_budget_s), ("seed", seed)):
        if value is not None:
            body[field] = value
    return Request("POST", "/v1/tune", {"Content-Type": JSON_TYPE, "Accept": JSON_TYPE},
                   json.dumps(body, sort_keys=True).encode("utf-8"), idempotent=False)


def tuning_request(job_id, method="GET"):
    if not isinstance(job_id, str) or not job_id:
        raise ValueError(f"job id must be a non-empty string, got {job_id!r}")
    if method == "DELETE":
        return Request("DELETE", "/v1/tune/" + quote(job_id, safe=""), {"Accept": JSON_TYPE})
    return get_request("/v1/tune/" + quote(job_id, safe=""))


# ---- execute --------------------------------------------------------------

def flatten_values(values):
    """{name: Tensor} for a list of inputs; a Python tuple is a tuple value."""
    named = {}

    def add(prefix, value):
        if isinstance(value, tuple):
            for i, element in enumerate(value):
                add(f"{prefix}.{i}", element)
        else:
            named[prefix] = as_tensor(value)

    if not isinstance(values, (list, tuple)):
        raise TypeError(f"inputs must be a list (one value per parameter), got {type(values).__name__}")
    for i, value in enumerate(values):
        add(str(i), value)
    return named


def nest_values(named):
    """Inverse of flatten_values: [Tensor | [..tuple..], ...] ordered by index."""
    root = {}
    for name, tensor in named.items():
        try:
            path = [int(part) for part in name.split(".")]
        except ValueError:
            raise KilnProtocolError(200, f"output name {name!r} is not 'i' or 'i.j...'") from None
        node = root
        for part in path[:-1]:
            node = node.setdefault(part, {})
            if not isinstance(node, dict):
                raise KilnProtocolError(200, f"output {name!r} is inside a non-tuple output")
        if path[-1] in node:
            raise KilnProtocolError(200, f"output {name!r} is both a tensor and a tuple")
        node[path[-1]] = tensor

    def build(node, where):
        indices = sorted(node)
        if indices != list(range(len(indices))):
            raise KilnProtocolError(200, f"outputs under {where or 'the root'} are numbered "
                                         f"{indices}, expected 0..{len(indices) - 1}")
        return [build(node[i], f"{where}{i}.") if isinstance(node[i], dict) else node[i]
                for i in indices]

    return build(root, "")


def _json_value(value):
    if isinstance(value, tuple):
        return {"tuple": [_json_value(v) for v in value]}
    return as_tensor(value).to_json()


def _from_json_value(value):
    if isinstance(value, dict) and "tuple" in value:
        return [_from_json_value(v) for v in value["tuple"]]
    try:
        return Tensor.from_json(value)
    except (ValueError, TypeError) as error:
        raise KilnProtocolError(200, f"execute answer: bad output tensor: {error}") from None


def execute_request(key, inputs, form="safetensors"):
    """The execute request; `form` is "safetensors" (exact, any size) or "json" (small)."""
    path = executable_path(key) + "/execute"
    if form == "safetensors":
        body = safetensors.encode(flatten_values(inputs))
        return Request("POST", path, {"Content-Type": SAFETENSORS_TYPE, "Accept": SAFETENSORS_TYPE},
                       body)
    if form == "json":
        if not isinstance(inputs, (list, tuple)):
            raise TypeError(f"inputs must be a list, got {type(inputs).__name__}")
        body = json.dumps({"inputs": [_json_value(v) for v in inputs]}, allow_nan=False)
        return Request("POST", path, {"Content-Type": JSON_TYPE, "Accept": JSON_TYPE},
                       body.encode("utf-8"))
    raise ValueError(f"form must be 'safetensors' or 'json', got {form!r}")


def _number(text, what):
    try:
        return float(text)
    except (TypeError, ValueError):
        raise KilnProtocolError(200, f"execute answer: {what} is not a number: {text!r}") from None


def parse_execute(answer):
    """The ExecuteResult from a safetensors or JSON execute answer."""
    content_type = answer.headers.get("content-type", "").split(";", 1)[0].strip()
    if content_type == JSON_TYPE:
        obj = answer.json("execute answer")
        if not isinstance(obj, dict) or not isinstance(obj.get("outputs"), list):
            raise KilnProtocolError(answer.status, "execute answer: no 'outputs' list")
        return ExecuteResult(key=obj.get("key", ""),
                             outputs=[_from_json_value(v) for v in obj["outputs"]],
                             device_us=_number(obj.get("device_us"), "device_us"),
                             kernels=[KernelProfile.from_json(k) for k in obj.get("kernels", [])],
                             device=obj.get("device", ""), queue_ms=obj.get("queue_ms"), raw=obj)
    if content_type in (SAFETENSORS_TYPE, "application/octet-stream"):
        try:
            named, metadata = safetensors.decode(answer.body)
        except safetensors.SafetensorsError as error:
            raise KilnProtocolError(answer.status, f"execute answer: {error}") from None
        headers = answer.headers
        device_us = metadata.get("kiln.device_us", headers.get("x-kiln-device-us"))
        profile = metadata.get("kiln.kernels", "[]")  # X-Kiln-Profile is only a summary
        try:
            kernels = [KernelProfile.from_json(k) for k in json.loads(profile)]
        except (ValueError, TypeError) as error:
            raise KilnProtocolError(answer.status, f"execute answer: bad kernel profile: {error}") from None
        queue_ms = metadata.get("kiln.queue_ms", headers.get("x-kiln-queue-ms"))
        return ExecuteResult(key=metadata.get("kiln.key", headers.get("x-kiln-key", "")),
                             outputs=nest_values(named),
                             device_us=_number(device_us, "device_us"), kernels=kernels,
                             device=metadata.get("kiln.device", headers.get("x-kiln-device", "")),
                             queue_ms=None if queue_ms is None else _number(queue_ms, "queue_ms"),
                             raw=metadata)
    raise KilnProtocolError(answer.status, f"execute answer has Content-Type {content_type!r}")
