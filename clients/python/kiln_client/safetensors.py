"""A standard-library reader and writer of the safetensors format.

Layout: an 8-byte little-endian header length N, N bytes of JSON header
({"name": {"dtype": "F32", "shape": [2, 3], "data_offsets": [begin, end]},
..., "__metadata__": {"key": "string value"}}) padded with spaces to a
multiple of 8, then the tensors' bytes, offsets relative to the buffer start.

`decode` never trusts its input: every offset, size and dtype is checked and
a bad file raises SafetensorsError saying what and where. Both functions are
pure and thread-safe.
"""

import json
import struct

from .tensor import DTYPES, DTYPES_BY_SAFETENSORS, Tensor, element_count

METADATA_KEY = "__metadata__"
MAX_HEADER_BYTES = 100 << 20  # as the reference implementation


class SafetensorsError(ValueError):
    """A malformed safetensors file."""


def encode(tensors, metadata=None):
    """Serializes {name: Tensor} (in the mapping's order) and string metadata to bytes."""
    header = {}
    if metadata:
        for key, value in metadata.items():
            if not isinstance(key, str) or not isinstance(value, str):
                raise TypeError(f"safetensors metadata must map str to str; got {key!r}: {value!r}")
        header[METADATA_KEY] = dict(metadata)
    offset = 0
    chunks = []
    for name, tensor in tensors.items():
        if name == METADATA_KEY:
            raise ValueError(f"{METADATA_KEY!r} cannot name a tensor")
        if not isinstance(tensor, Tensor):
            raise TypeError(f"tensor {name!r}: expected Tensor, got {type(tensor).__name__}")
        header[name] = {"dtype": DTYPES[tensor.dtype].safetensors, "shape": list(tensor.shape),
                        "data_offsets": [offset, offset + len(tensor.data)]}
        offset += len(tensor.data)
        chunks.append(tensor.data)
    text = json.dumps(header, separators=(",", ":")).encode("utf-8")
    text += b" " * (-len(text) % 8)
    return struct.pack("<Q", len(text)) + text + b"".join(chunks)


def decode(data):
    """Parses safetensors bytes into ({name: Tensor}, {metadata key: value}).

    Tensors come back in the order of their data offsets. Raises
    SafetensorsError for a truncated file, a header that is not a JSON
    object, an unknown dtype, offsets outside the buffer, overlapping or
    unindexed bytes, or a size that does not match the shape.
    """
    data = memoryview(data)
    if len(data) < 8:
        raise SafetensorsError(f"{len(data)} bytes: too short for the 8-byte header length")
    (header_len,) = struct.unpack_from("<Q", data, 0)
    if header_len > MAX_HEADER_BYTES:
        raise SafetensorsError(f"header length {header_len} exceeds {MAX_HEADER_BYTES} bytes")
    if 8 + header_len > len(data):
        raise SafetensorsError(f"header length {header_len} runs past the {len(data)}-byte file")
    try:
        header = json.loads(bytes(data[8:8 + header_len]).decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as error:
        raise SafetensorsError(f"header is not valid JSON: {error}") from None
    if not isinstance(header, dict):
        raise SafetensorsError(f"header is a JSON {type(header).__name__}, expected an object")
    buffer = data[8 + header_len:]

    metadata = header.pop(METADATA_KEY, None) or {}
    if not isinstance(metadata, dict) or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in metadata.items()):
        raise SafetensorsError(f"{METADATA_KEY} must map strings to strings")

    spans = []
    for name, entry in header.items():
        begin, end, info, shape = _check_entry(name, entry, len(buffer))
        spans.append((begin, end, name, info, shape))
    spans.sort()
    position = 0
    tensors = {}
    for begin, end, name, info, shape in spans:
        if begin != position:
            what = "overlaps the previous tensor" if begin < position else f"leaves bytes {position}..{begin} unindexed"
            raise SafetensorsError(f"tensor {name!r}: data_offsets [{begin}, {end}] {what}")
        tensors[name] = Tensor(info.name, shape, bytes(buffer[begin:end]))
        position = end
    if position != len(buffer):
        raise SafetensorsError(f"bytes {position}..{len(buffer)} of the buffer belong to no tensor")
    return tensors, dict(metadata)


def _check_entry(name, entry, buffer_len):
    where = f"tensor {name!r}"
    if not isinstance(entry, dict):
        raise SafetensorsError(f"{where}: expected an object, got {entry!r:.80}")
    info = DTYPES_BY_SAFETENSORS.get(entry.get("dtype"))
    if info is None:
        raise SafetensorsError(f"{where}: unsupported dtype {entry.get('dtype')!r}; expected one of "
                               f"{', '.join(DTYPES_BY_SAFETENSORS)}")
    shape = entry.get("shape")
    if not isinstance(shape, list) or not all(
            isinstance(d, int) and not isinstance(d, bool) and d >= 0 for d in shape):
        raise SafetensorsError(f"{where}: shape must be a list of non-negative integers, got {shape!r}")
    offsets = entry.get("data_offsets")
    if (not isinstance(offsets, list) or len(offsets) != 2
            or not all(isinstance(o, int) and not isinstance(o, bool) for o in offsets)):
        raise SafetensorsError(f"{where}: data_offsets must be [begin, end], got {offsets!r}")
    begin, end = offsets
    if not 0 <= begin <= end <= buffer_len:
        raise SafetensorsError(f"{where}: data_offsets [{begin}, {end}] run past the "
                               f"{buffer_len}-byte buffer")
    expected = element_count(shape) * info.itemsize
    if end - begin != expected:
        raise SafetensorsError(f"{where}: {info.safetensors}{shape} needs {expected} bytes, "
                               f"data_offsets span {end - begin}")
    return begin, end, info, tuple(shape)
