"""KilnClient: the trainer's side of kiln's HTTP API (schema/openapi.yaml).

One client keeps one keep-alive HTTP/1.1 connection (http.client) and sends
its requests on it one at a time; it is safe to share between threads, which
then take turns. For parallel requests give each thread its own client.

A request that fails because the server closed an idle kept-alive connection
is sent once more on a new one (every kiln operation is idempotent). Errors
raise KilnError (see errors.py); nothing is retried after the server answered.
"""

import http.client
import socket
import threading
from urllib.parse import urlsplit

from . import wire, zstd
from .errors import KilnConnectionError, KilnProtocolError, error_from_response
from .results import CompileResult, EntryPage, ExecutableBytes, ExplainResult

DEFAULT_URL = "http://127.0.0.1:8470"
# Bodies at least this large are zstd-compressed when zstd is available.
COMPRESS_MIN_BYTES = 64 << 10
MAX_ANSWER_BYTES = 1 << 34

# Failures that mean a reused connection went stale before the server read
# the request.
_STALE_CONNECTION = (http.client.RemoteDisconnected, http.client.CannotSendRequest,
                     ConnectionResetError, BrokenPipeError)


class KilnClient:
    """A client for one kiln server.

    base_url: "http://host:port" (optionally with a path prefix, for a proxy).
    token: bearer token, when the server has an --auth-file.
    namespace: "shared" to use the shared namespace (the token must allow it).
    compress_requests: None = zstd-compress large bodies when zstd is
      installed; True = always (ValueError if zstd is missing); False = never.
    timeout: seconds for connecting and for each read (a compile can be slow).
    """

    def __init__(self, base_url=DEFAULT_URL, token=None, *, namespace=None,
                 compress_requests=None, timeout=600.0):
        parts = urlsplit(base_url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"base_url must be http(s)://host[:port], got {base_url!r}")
        if compress_requests and not zstd.available():
            raise ValueError("compress_requests=True needs zstd (Python 3.14+ or zstandard)")
        self._scheme = parts.scheme
        self._host = parts.hostname
        self._port = parts.port
        self._prefix = parts.path.rstrip("/")
        self._timeout = timeout
        self._compress = zstd.available() if compress_requests is None else compress_requests
        self._headers = {"User-Agent": "kiln-python-client/1"}
        if token:
            self._headers["Authorization"] = f"Bearer {token}"
        if namespace:
            self._headers["X-Kiln-Namespace"] = namespace
        if zstd.available():
            self._headers["Accept-Encoding"] = "zstd"
        self._lock = threading.Lock()
        self._connection = None
        self._connection_used = False

    # ---- compile and explain -------------------------------------------------

    def compile(self, hlo, chip=None, options=None):
        """Compiles HLO text (or finds it cached); returns a CompileResult.

        chip: "v4", "v5e", "v5p", "v6e" or "tpu7x" (server default v5e).
        options: {"plan": "none"|"heuristic"|"given", "scoped_vmem_bytes": int}.
        """
        request = wire.compile_request(hlo, chip, options)
        return CompileResult.from_json(self._json(request))

    def compile_executable(self, hlo, chip=None, options=None):
        """Like compile, but returns the executable's bytes (ExecutableBytes, with .key, .cache)."""
        answer = self._send(wire.compile_request(hlo, chip, options, return_executable=True))
        return ExecutableBytes.with_headers(answer.body, answer.headers)

    def explain(self, hlo, chip=None, options=None):
        """Whether HLO is cached and, if not, how it differs from the nearest entry."""
        return ExplainResult.from_json(self._json(wire.explain_request(hlo, chip, options)))

    # ---- executables ---------------------------------------------------------

    def get_executable(self, key):
        """The cached executable's bytes (ExecutableBytes); KilnError 404 if absent."""
        answer = self._send(wire.get_executable_request(key))
        return ExecutableBytes.with_headers(answer.body, answer.headers)

    def entry(self, key):
        """The entry's metadata as a dict (the Entry schema)."""
        return self._json(wire.get_executable_request(key, as_json=True))

    def exists(self, key):
        """True when the key is cached for this tenant (a HEAD; not counted as a hit)."""
        answer = self._send(wire.head_executable_request(key), ok=(200, 404))
        return answer.status == 200

    def delete(self, key):
        """Deletes the entry (needs role admin); KilnError 404 if absent."""
        self._send(wire.delete_executable_request(key), ok=(204, 200))

    def execute(self, key, inputs, *, form="safetensors"):
        """Runs the executable on a simulated chip; returns an ExecuteResult.

        inputs: one value per entry parameter, in order: kiln_client.Tensor,
          numpy arrays or array.array (1-D); a Python tuple for a tuple
          parameter. form: "safetensors" (default, exact) or "json".
        """
        return wire.parse_execute(self._send(wire.execute_request(key, inputs, form)))

    # ---- observation ---------------------------------------------------------

    def stats(self):
        return self._json(wire.get_request("/v1/stats"))

    def entries(self, chip=None, plan=None, sort=None, limit=None, cursor=None):
        """One page of entries (EntryPage); pass page.next_cursor for the next."""
        return EntryPage.from_json(self._json(wire.entries_request(chip, plan, sort, limit, cursor)))

    def iter_entries(self, chip=None, plan=None, sort=None, page_size=None):
        """Every entry, following cursors."""
        cursor = None
        while True:
            page = self.entries(chip, plan, sort, page_size, cursor)
            yield from page.entries
            if not page.next_cursor:
                return
            cursor = page.next_cursor

    def pool(self):
        return self._json(wire.get_request("/v1/pool"))

    def health(self):
        return self._json(wire.get_request("/healthz"))

    def metrics(self):
        """The Prometheus text."""
        return self._send(wire.get_request("/metrics", accept="text/plain")).body.decode("utf-8")

    def tune(self, hlo=None, key=None, chip=None, max_trials=None, time_budget_s=None, seed=None):
        """Starts autotuning the entry compiled from `hlo` (or, with `key` alone, finds
        the key's running job); returns the job dict."""
        return self._json(wire.tune_request(key, max_trials, time_budget_s, hlo, chip, seed), ok=(200, 202))

    def tuning(self, job_id):
        """An autotuning job's state."""
        return self._json(wire.tuning_request(job_id))

    def cancel_tuning(self, job_id):
        """Cancels an autotuning job; returns the job dict."""
        return self._json(wire.tuning_request(job_id, method="DELETE"), ok=(200, 202))

    # ---- transport -----------------------------------------------------------

    def close(self):
        with self._lock:
            self._drop_connection()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def _json(self, request, ok=(200,)):
        answer = self._send(request, ok)
        content_type = answer.headers.get("content-type", "")
        if not content_type.startswith(wire.JSON_TYPE):
            raise KilnProtocolError(answer.status, f"{request.describe()}: expected JSON, "
                                                   f"got Content-Type {content_type!r}")
        return answer.json(request.describe())

    def _send(self, request, ok=(200,)):
        """Sends `request`; returns the Answer, or raises KilnError if its status is not in ok."""
        headers = dict(self._headers)
        headers.update(request.headers)
        body = request.body
        if body is not None and self._compress and len(body) >= COMPRESS_MIN_BYTES:
            body = zstd.compress(body)
            headers["Content-Encoding"] = "zstd"
        with self._lock:
            answer = self._round_trip(request.method, self._prefix + request.path, headers, body,
                                      request.describe())
        if answer.status not in ok:
            raise error_from_response(answer.status, answer.headers, answer.body, request.describe())
        return answer

    def _round_trip(self, method, target, headers, body, what):
        for attempt in (0, 1):
            reused = self._connection is not None and self._connection_used
            connection = self._connect()
            try:
                connection.request(method, target, body=body, headers=headers)
                response = connection.getresponse()
                data = response.read()
            except _STALE_CONNECTION as error:
                self._drop_connection()
                if reused and attempt == 0:
                    continue
                raise KilnConnectionError(f"{what}: connection to {self._host} lost: {error}") from error
            except (OSError, http.client.HTTPException) as error:
                self._drop_connection()
                raise KilnConnectionError(f"{what}: {self._describe_server()}: {error}") from error
            self._connection_used = True
            answer_headers = {name.lower(): value for name, value in response.getheaders()}
            if response.will_close:
                self._drop_connection()
            return wire.Answer(response.status, answer_headers, self._decode(answer_headers, data, what))
        raise AssertionError("unreachable")

    def _decode(self, headers, data, what):
        coding = headers.pop("content-encoding", "identity").strip().lower()
        if coding == "identity" or not data:
            return data
        if coding == "zstd" and zstd.available():
            try:
                return zstd.decompress(data, MAX_ANSWER_BYTES)
            except Exception as error:  # the codec's own error types differ
                raise KilnProtocolError(0, f"{what}: bad zstd answer: {error}") from error
        raise KilnProtocolError(0, f"{what}: answer has unsupported Content-Encoding {coding!r}")

    def _connect(self):
        if self._connection is None:
            kind = http.client.HTTPSConnection if self._scheme == "https" else http.client.HTTPConnection
            self._connection = kind(self._host, self._port, timeout=self._timeout)
            self._connection_used = False
            try:
                self._connection.connect()
                self._connection.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            except OSError as error:
                self._drop_connection()
                raise KilnConnectionError(f"cannot connect to {self._describe_server()}: {error}") from error
        return self._connection

    def _drop_connection(self):
        if self._connection is not None:
            self._connection.close()
            self._connection = None

    def _describe_server(self):
        return f"{self._scheme}://{self._host}:{self._port or ''}{self._prefix}"

    def __repr__(self):
        return f"KilnClient({self._describe_server()!r})"
