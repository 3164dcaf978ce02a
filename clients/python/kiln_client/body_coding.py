"""Whether and how a request body is compressed (Content-Encoding).

The server accepts `zstd` and `identity` request bodies (schema/openapi.yaml,
parameter ContentEncoding); there is no gzip to fall back to, so without a
zstd codec (zstd.available() is False) every body goes as it is.

"When it pays" (mode "auto"): zstd costs CPU on both ends (a 3 MB HLO module
takes milliseconds to compress and to decompress), which only a slower link
than loopback pays back. So auto compresses a body when
  * the server is not on a loopback address,
  * the body is at least `min_bytes`, and
  * a sample of it shrinks by at least 10 %.
Mode "always" compresses every body of at least `min_bytes`; "never" none.

A training job sends the same HLO module every step, so the compressed forms
of the last few distinct bodies are kept (compared by value: equal bytes give
the kept form without compressing again). Thread-safe: a lock guards the kept
bodies; compression itself runs outside it.
"""

import ipaddress
import threading

from . import zstd

MODES = ("auto", "always", "never")
SAMPLE_BYTES = 64 << 10
MIN_SAVING = 0.10          # a sample must shrink at least this much in auto mode


def is_loopback(host):
    """True for localhost, 127.0.0.0/8 and ::1 (names other than localhost are not resolved)."""
    if host.lower() in ("localhost", "localhost.localdomain") or host.lower().endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


class RequestCompressor:
    """Chooses each request body's wire form.

    mode: "auto", "always" or "never" (see the module comment). ValueError for
    "always" without a zstd codec.
    """

    def __init__(self, mode, host, *, min_bytes=64 << 10, level=1, keep_bodies=4,
                 keep_bytes=64 << 20):
        if mode not in MODES:
            raise ValueError(f"compression mode must be one of {', '.join(MODES)}, got {mode!r}")
        if mode == "always" and not zstd.available():
            raise ValueError("zstd compression needs Python 3.14+ (compression.zstd) or the "
                             "zstandard package (Debian: python3-zstandard)")
        self.mode = mode
        self._active = zstd.available() and (mode == "always" or (mode == "auto" and not is_loopback(host)))
        self._sample = mode == "auto"
        self._min_bytes = min_bytes
        self._level = level
        self._keep_bodies = keep_bodies
        self._keep_bytes = keep_bytes
        self._kept = []  # [(raw, encoded or None)], most recent first; None: sent as it is
        self._lock = threading.Lock()

    @property
    def active(self):
        """Whether any body may be compressed at all (codec present, mode and host allow it)."""
        return self._active

    def encode(self, body):
        """(wire bytes, content coding or None) for `body` (bytes or None)."""
        if not self._active or body is None or len(body) < self._min_bytes:
            return body, None
        kept = self._find(body)
        if kept is not None:
            return (body, None) if kept is _PLAIN else (kept, "zstd")
        encoded = None
        if not self._sample or self._pays(body):
            encoded = zstd.compress(body, self._level)
            if self._sample and len(encoded) > len(body) * (1 - MIN_SAVING):
                encoded = None
        self._keep(body, encoded)
        return (body, None) if encoded is None else (encoded, "zstd")

    def _pays(self, body):
        sample = bytes(memoryview(body)[:SAMPLE_BYTES])
        return len(zstd.compress(sample, self._level)) <= len(sample) * (1 - MIN_SAVING)

    def _find(self, body):
        with self._lock:
            for i, (raw, encoded) in enumerate(self._kept):
                if len(raw) == len(body) and raw == body:
                    if i:
                        self._kept.insert(0, self._kept.pop(i))
                    return _PLAIN if encoded is None else encoded
        return None

    def _keep(self, body, encoded):
        with self._lock:
            self._kept.insert(0, (bytes(body), encoded))
            total = 0
            for i, (raw, kept) in enumerate(self._kept):
                total += len(raw) + (len(kept) if kept else 0)
                if i >= self._keep_bodies or total > self._keep_bytes:
                    del self._kept[i:]
                    break


_PLAIN = object()
