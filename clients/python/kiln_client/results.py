"""Typed views of the API's answers (schema/openapi.yaml names the fields).

Each result keeps the decoded JSON in `raw` so fields added to the API later
are still reachable. `from_json` raises KilnProtocolError when a required
field is missing or has the wrong type. Results are immutable values.
"""

from dataclasses import dataclass, field

from .errors import KilnProtocolError


def _get(obj, name, kinds, what):
    value = obj.get(name) if isinstance(obj, dict) else None
    if not isinstance(value, kinds) or (isinstance(value, bool) and bool not in _as_tuple(kinds)):
        raise KilnProtocolError(200, f"{what}: field {name!r} is missing or not "
                                     f"{'/'.join(k.__name__ for k in _as_tuple(kinds))}: {value!r:.80}")
    return value


def _as_tuple(kinds):
    return kinds if isinstance(kinds, tuple) else (kinds,)


_NUMBER = (int, float)


class ExecutableBytes(bytes):
    """An executable's bytes, with the key and cache outcome the server sent beside them."""

    key: str = ""
    cache: str = ""   # "hit", "miss" or "joined" from a compile; "" from a fetch
    chip: str = ""
    plan: str = ""

    @classmethod
    def with_headers(cls, data, headers):
        result = cls(data)
        result.key = headers.get("x-kiln-key") or headers.get("etag", "").strip('"')
        result.cache = headers.get("x-kiln-cache", "")
        result.chip = headers.get("x-kiln-chip", "")
        result.plan = headers.get("x-kiln-plan", "")
        return result


@dataclass(frozen=True)
class CompileResult:
    key: str
    cache: str            # "hit", "miss" or "joined"
    chip: str
    plan: str
    compile_ms: float     # this request's compile (or wait); 0 on a hit
    kernels: int
    estimated_us: float
    fast_path: bool
    raw: dict = field(repr=False, compare=False)
    tier: str = "local"   # "shared": fetched from another server's compile (kiln serve --shared)

    @classmethod
    def from_json(cls, obj):
        what = "compile answer"
        return cls(key=_get(obj, "key", str, what), cache=_get(obj, "cache", str, what),
                   chip=_get(obj, "chip", str, what), plan=_get(obj, "plan", str, what),
                   compile_ms=float(_get(obj, "compile_ms", _NUMBER, what)),
                   kernels=_get(obj, "kernels", int, what),
                   estimated_us=float(_get(obj, "estimated_us", _NUMBER, what)),
                   fast_path=bool(obj.get("fast_path", False)), raw=obj,
                   tier=str(obj.get("tier", "local")))


@dataclass(frozen=True)
class KernelProfile:
    name: str
    us: float
    bound: str            # "compute", "memory" or "overhead"
    flops: float
    bytes: float          # HBM<->VMEM traffic
    kind: str = ""        # "loop", "output", ...
    mxu_utilization: float | None = None
    grid_steps: float | None = None
    tiling: str = ""

    @classmethod
    def from_json(cls, obj):
        what = "kernel profile"
        return cls(name=_get(obj, "name", str, what), us=float(_get(obj, "us", _NUMBER, what)),
                   bound=_get(obj, "bound", str, what),
                   flops=float(_get(obj, "flops", _NUMBER, what)),
                   bytes=float(_get(obj, "bytes", _NUMBER, what)), kind=obj.get("kind", ""),
                   mxu_utilization=obj.get("mxu_utilization"), grid_steps=obj.get("grid_steps"),
                   tiling=obj.get("tiling", ""))


@dataclass(frozen=True)
class ExecuteResult:
    key: str
    outputs: list         # Tensor per output; a tuple output is a list of values
    device_us: float
    kernels: list         # KernelProfile per kernel launch
    device: str           # "v5e:0"
    queue_ms: float | None = None
    raw: dict = field(default_factory=dict, repr=False, compare=False)

    def numpy(self):
        """The outputs as numpy arrays (nested lists for tuple outputs)."""
        def convert(value):
            return [convert(v) for v in value] if isinstance(value, list) else value.numpy()
        return [convert(v) for v in self.outputs]


@dataclass(frozen=True)
class Difference:
    component: str        # "parameter 2", "entry body", "target", ...
    message: str          # "parameter 2 is f32[17,128], nearest entry has f32[16,128]"
    request: str | None = None
    nearest: str | None = None

    @classmethod
    def from_json(cls, obj):
        what = "explain difference"
        return cls(component=_get(obj, "component", str, what),
                   message=_get(obj, "message", str, what),
                   request=obj.get("request"), nearest=obj.get("nearest"))


@dataclass(frozen=True)
class ExplainResult:
    key: str
    cached: bool
    nearest_key: str | None
    differences: list     # Difference, first difference first
    message: str
    raw: dict = field(repr=False, compare=False)
    # The instructions that differ from the nearest entry (dicts: "kind",
    # "instruction", "computation", "request", "cached", "line"), when both
    # texts are kept: what a component such as "entry body" hides.
    changes: list = field(default_factory=list, compare=False)

    @classmethod
    def from_json(cls, obj):
        what = "explain answer"
        nearest = obj.get("nearest") if isinstance(obj, dict) else None
        nearest_key = _get(nearest, "key", str, "explain nearest entry") if nearest else None
        return cls(key=_get(obj, "key", str, what), cached=_get(obj, "cached", bool, what),
                   nearest_key=nearest_key,
                   differences=[Difference.from_json(d)
                                for d in _get(obj, "differences", list, what)],
                   message=_get(obj, "message", str, what), raw=obj,
                   changes=list(obj.get("changes") or []))


@dataclass(frozen=True)
class EntryPage:
    entries: list         # dicts as the Entry schema describes
    next_cursor: str | None

    @classmethod
    def from_json(cls, obj):
        return cls(entries=_get(obj, "entries", list, "entries page"),
                   next_cursor=obj.get("next_cursor"))
