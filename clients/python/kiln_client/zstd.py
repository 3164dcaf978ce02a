"""Optional zstd support for request and response bodies.

The standard library has zstd only from Python 3.14 (compression.zstd); the
third-party `zstandard` package is used when that is missing. Without either,
`available()` is False and the client sends and accepts plain bodies only.
Thread-safe: every call makes its own (de)compressor.
"""

try:  # Python 3.14+
    from compression import zstd as _stdlib_zstd
except ImportError:
    _stdlib_zstd = None

try:
    import zstandard as _zstandard
except ImportError:
    _zstandard = None


def available():
    return _stdlib_zstd is not None or _zstandard is not None


def compress(data, level=3):
    if _stdlib_zstd is not None:
        return _stdlib_zstd.compress(data, level=level)
    if _zstandard is not None:
        return _zstandard.ZstdCompressor(level=level).compress(data)
    raise RuntimeError("zstd is not available (needs Python 3.14+ or the zstandard package)")


def decompress(data, max_bytes):
    """Decompresses a zstd frame, refusing output beyond `max_bytes`."""
    if _stdlib_zstd is not None:
        decompressor = _stdlib_zstd.ZstdDecompressor()
        out = decompressor.decompress(data, max_length=max_bytes + 1)
    elif _zstandard is not None:
        reader = _zstandard.ZstdDecompressor().stream_reader(data)
        chunks, size = [], 0
        while size <= max_bytes:
            chunk = reader.read(min(1 << 20, max_bytes + 1 - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
        out = b"".join(chunks)
    else:
        raise RuntimeError("zstd is not available (needs Python 3.14+ or the zstandard package)")
    if len(out) > max_bytes:
        raise ValueError(f"zstd body expands past {max_bytes} bytes")
    return out
