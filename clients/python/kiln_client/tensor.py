"""Dense tensors as kiln exchanges them: an HLO element type, a shape and
little-endian row-major bytes.

`Tensor` is immutable and thread-safe. It converts from and to Python
values, `array.array` and (when installed) numpy arrays, and to and from the
API's JSON tensor form. Bad input raises ValueError or TypeError naming what
is wrong; nothing here does I/O.
"""

import array
import math
import struct
import sys
from dataclasses import dataclass

try:  # numpy is optional
    import numpy as _np
except ImportError:  # pragma: no cover - depends on the machine
    _np = None


@dataclass(frozen=True)
class DType:
    name: str            # HLO name: "f32"
    itemsize: int        # bytes per element
    struct_code: str     # struct format letter; "" for bf16 (converted by hand)
    safetensors: str     # safetensors name: "F32"
    array_code: str      # array.array typecode; "" when array has none
    numpy: str           # numpy dtype name; "" when numpy has none
    kind: str            # "bool", "int" or "float"


_DTYPE_LIST = [
    DType("pred", 1, "?", "BOOL", "B", "bool", "bool"),
    DType("s8", 1, "b", "I8", "b", "int8", "int"),
    DType("s16", 2, "h", "I16", "h", "int16", "int"),
    DType("s32", 4, "i", "I32", "i", "int32", "int"),
    DType("s64", 8, "q", "I64", "q", "int64", "int"),
    DType("u8", 1, "B", "U8", "B", "uint8", "int"),
    DType("u16", 2, "H", "U16", "H", "uint16", "int"),
    DType("u32", 4, "I", "U32", "I", "uint32", "int"),
    DType("u64", 8, "Q", "U64", "Q", "uint64", "int"),
    DType("f16", 2, "e", "F16", "", "float16", "float"),
    DType("bf16", 2, "", "BF16", "", "", "float"),
    DType("f32", 4, "f", "F32", "f", "float32", "float"),
    DType("f64", 8, "d", "F64", "d", "float64", "float"),
    # Carried as bytes; to_list decodes them, from_values cannot build them.
    DType("f8e5m2", 1, "", "F8_E5M2", "", "", "float8"),
    DType("f8e4m3fn", 1, "", "F8_E4M3", "", "", "float8"),
    DType("c64", 8, "", "C64", "", "complex64", "complex"),
]

DTYPES = {d.name: d for d in _DTYPE_LIST}
DTYPES_BY_SAFETENSORS = {d.safetensors: d for d in _DTYPE_LIST}
_DTYPES_BY_NUMPY = {d.numpy: d for d in _DTYPE_LIST if d.numpy}
_DTYPES_BY_ARRAY_CODE = {"b": "s8", "B": "u8", "h": "s16", "H": "u16", "i": "s32", "I": "u32",
                         "l": None, "L": None, "q": "s64", "Q": "u64", "f": "f32", "d": "f64"}

_JSON_SPECIAL = {"nan": math.nan, "inf": math.inf, "-inf": -math.inf}


def dtype_info(name):
    """The DType called `name` ("f32"); ValueError for an unknown name."""
    try:
        return DTYPES[name]
    except KeyError:
        raise ValueError(f"unknown dtype {name!r}; expected one of {', '.join(DTYPES)}") from None


def element_count(shape):
    count = 1
    for dim in shape:
        count *= dim
    return count


def _f32_to_bf16_bits(value):
    """Rounds a float to bfloat16 (nearest even) and returns its 16 bits."""
    try:
        bits = struct.unpack("<I", struct.pack("<f", value))[0]
    except OverflowError:  # beyond f32's range: beyond bf16's too
        return 0xFF80 if value < 0 else 0x7F80
    if math.isnan(value):
        return (bits >> 16) | 0x0040  # keep the sign, force a quiet NaN
    rounding = 0x7FFF + ((bits >> 16) & 1)
    return ((bits + rounding) >> 16) & 0xFFFF


def _bf16_bits_to_float(bits):
    return struct.unpack("<f", struct.pack("<I", bits << 16))[0]


def _decode_f8(name, byte):
    if name == "f8e5m2":  # the high byte of an IEEE half
        return struct.unpack("<e", bytes((0, byte)))[0]
    sign = -1.0 if byte & 0x80 else 1.0
    exponent, mantissa = (byte >> 3) & 0xF, byte & 0x7
    if exponent == 0xF and mantissa == 0x7:  # e4m3fn has NaN but no infinities
        return math.nan
    if exponent == 0:
        return sign * mantissa * 2.0 ** -9
    return sign * (1 + mantissa / 8) * 2.0 ** (exponent - 7)


def _flatten(values):
    """Flattens nested lists row-major; returns (flat, shape), checking raggedness."""
    if not isinstance(values, (list, tuple)):
        return [values], ()
    inferred = []
    level = values
    while isinstance(level, (list, tuple)):
        inferred.append(len(level))
        if not level:
            break
        level = level[0]
    flat = []

    def walk(node, depth, where):
        if depth == len(inferred):
            if isinstance(node, (list, tuple)):
                raise ValueError(f"ragged nested list at {where}: deeper than the first element")
            flat.append(node)
            return
        if not isinstance(node, (list, tuple)) or len(node) != inferred[depth]:
            raise ValueError(f"ragged nested list at {where}: expected {inferred[depth]} elements")
        for i, child in enumerate(node):
            walk(child, depth + 1, f"{where}[{i}]")

    walk(values, 0, "values")
    return flat, tuple(inferred)


def _encode_element(info, value, index):
    if isinstance(value, str):
        if info.kind != "float" or value not in _JSON_SPECIAL:
            raise ValueError(f"element {index}: {value!r} is not a {info.name} value")
        value = _JSON_SPECIAL[value]
    if info.kind == "bool":
        return bool(value)
    if info.kind == "int":
        if isinstance(value, float) or not isinstance(value, int):
            if isinstance(value, float) and value.is_integer():
                return int(value)
            raise ValueError(f"element {index}: {value!r} is not an integer ({info.name})")
        return value
    return float(value)


@dataclass(frozen=True)
class Tensor:
    """An immutable dense array: `dtype` (HLO name), `shape`, row-major `data` bytes."""

    dtype: str
    shape: tuple
    data: bytes

    def __post_init__(self):
        info = dtype_info(self.dtype)
        shape = tuple(self.shape)
        if any(not isinstance(d, int) or isinstance(d, bool) or d < 0 for d in shape):
            raise ValueError(f"shape {list(self.shape)}: dimensions must be non-negative integers")
        object.__setattr__(self, "shape", shape)
        object.__setattr__(self, "data", bytes(self.data))
        expected = element_count(shape) * info.itemsize
        if len(self.data) != expected:
            raise ValueError(f"{self.type_string()}: needs {expected} bytes of data, got {len(self.data)}")

    # ---- construction ---------------------------------------------------

    @classmethod
    def from_values(cls, values, dtype="f32", shape=None):
        """From a scalar, a flat list (with `shape`) or nested lists (shape inferred).

        Floats are rounded to the dtype (bf16 and f16 to nearest even); "nan",
        "inf" and "-inf" strings are accepted for float types.
        """
        info = dtype_info(dtype)
        if info.kind in ("float8", "complex"):
            raise ValueError(f"{info.name} tensors cannot be built from values; pass their raw "
                             f"bytes as Tensor({info.name!r}, shape, data)")
        flat, inferred = _flatten(values)
        if shape is None:
            shape = inferred
        shape = tuple(shape)
        if element_count(shape) != len(flat):
            raise ValueError(f"{len(flat)} values do not fill shape {list(shape)} "
                             f"({element_count(shape)} elements)")
        elements = [_encode_element(info, v, i) for i, v in enumerate(flat)]
        if info.name == "bf16":
            data = struct.pack(f"<{len(elements)}H", *(_f32_to_bf16_bits(v) for v in elements))
        else:
            try:
                data = struct.pack(f"<{len(elements)}{info.struct_code}", *elements)
            except (struct.error, OverflowError) as error:
                raise ValueError(f"values do not fit {info.name}: {error}") from None
        return cls(info.name, shape, data)

    @classmethod
    def from_array(cls, values, shape=None, dtype=None):
        """From an array.array (row-major); `shape` defaults to 1-D."""
        name = dtype or _DTYPES_BY_ARRAY_CODE.get(values.typecode)
        if name is None:
            raise ValueError(f"array typecode {values.typecode!r} has no fixed-size kiln dtype; "
                             "use 'i'/'q'/'f'/'d' or pass dtype=")
        info = dtype_info(name)
        if values.itemsize != info.itemsize:
            raise ValueError(f"array typecode {values.typecode!r} has {values.itemsize}-byte items; "
                             f"{name} needs {info.itemsize}")
        if sys.byteorder == "big":
            values = array.array(values.typecode, values)
            values.byteswap()
        return cls(name, (len(values),) if shape is None else tuple(shape), values.tobytes())

    @classmethod
    def from_numpy(cls, ndarray):
        """From a numpy array of a supported dtype (copied, made little-endian)."""
        info = _DTYPES_BY_NUMPY.get(ndarray.dtype.name)
        if info is None:
            raise ValueError(f"numpy dtype {ndarray.dtype.name} has no kiln dtype")
        little = _np.ascontiguousarray(ndarray, dtype=ndarray.dtype.newbyteorder("<"))
        return cls(info.name, tuple(int(d) for d in ndarray.shape), little.tobytes())

    @classmethod
    def from_json(cls, value):
        """From the API's JSON form {"shape", "dtype", "data"}."""
        if not isinstance(value, dict) or not {"shape", "dtype", "data"} <= value.keys():
            raise ValueError(f"a JSON tensor needs shape, dtype and data; got {value!r:.120}")
        return cls.from_values(value["data"], value["dtype"], value["shape"])

    # ---- conversion -----------------------------------------------------

    @property
    def size(self):
        return element_count(self.shape)

    def type_string(self):
        """HLO spelling of the type, e.g. "f32[2,3]"."""
        return f"{self.dtype}[{','.join(str(d) for d in self.shape)}]"

    def to_list(self):
        """The elements, flat and row-major, as Python bool/int/float."""
        info = DTYPES[self.dtype]
        if info.name == "bf16":
            bits = struct.unpack(f"<{self.size}H", self.data)
            return [_bf16_bits_to_float(b) for b in bits]
        if info.kind == "float8":
            return [_decode_f8(info.name, b) for b in self.data]
        if info.kind == "complex":
            parts = struct.unpack(f"<{2 * self.size}f", self.data)
            return [complex(parts[i], parts[i + 1]) for i in range(0, len(parts), 2)]
        return list(struct.unpack(f"<{self.size}{info.struct_code}", self.data))

    def tolist(self):
        """The elements as nested lists shaped like the tensor (a scalar for shape ())."""
        flat = self.to_list()
        if not self.shape:
            return flat[0]

        def build(offset, depth):
            if depth == len(self.shape) - 1:
                return flat[offset:offset + self.shape[depth]], offset + self.shape[depth]
            rows = []
            for _ in range(self.shape[depth]):
                row, offset = build(offset, depth + 1)
                rows.append(row)
            return rows, offset

        return build(0, 0)[0]

    def to_array(self):
        """An array.array of the elements; f16 and bf16 widen to 'f' (f32)."""
        info = DTYPES[self.dtype]
        if info.kind == "complex":
            raise ValueError("array.array has no complex type; use to_list() or numpy()")
        if not info.array_code:
            return array.array("f", self.to_list())
        values = array.array(info.array_code)
        values.frombytes(self.data)
        if sys.byteorder == "big":
            values.byteswap()
        return values

    def numpy(self):
        """A numpy array (needs numpy); bf16 widens to float32."""
        if _np is None:
            raise RuntimeError("numpy is not installed; use to_list() or to_array()")
        info = DTYPES[self.dtype]
        if not info.numpy:
            return _np.array(self.to_list(), dtype=_np.float32).reshape(self.shape)
        return _np.frombuffer(self.data, dtype=_np.dtype(info.numpy).newbyteorder("<")) \
            .reshape(self.shape).astype(info.numpy)

    def to_json(self):
        """The API's JSON form; NaN and infinities become "nan", "inf", "-inf"."""
        if DTYPES[self.dtype].kind in ("float8", "complex"):
            raise ValueError(f"{self.dtype} tensors travel only in safetensors, not in JSON")
        def encode(value):
            if isinstance(value, float) and not math.isfinite(value):
                return "nan" if math.isnan(value) else ("inf" if value > 0 else "-inf")
            return value
        return {"shape": list(self.shape), "dtype": self.dtype,
                "data": [encode(v) for v in self.to_list()]}


def as_tensor(value):
    """A Tensor from a Tensor or a numpy array; TypeError for anything else."""
    if isinstance(value, Tensor):
        return value
    if _np is not None and isinstance(value, _np.ndarray):
        return Tensor.from_numpy(value)
    if isinstance(value, array.array):
        return Tensor.from_array(value)
    raise TypeError(f"expected a kiln_client.Tensor, numpy array or array.array, got "
                    f"{type(value).__name__} (use Tensor.from_values for lists)")
