"""KilnClient: the trainer's side of kiln's HTTP API (schema/openapi.yaml).

One client keeps one keep-alive HTTP/1.1 connection (http.client) and sends
its requests on it one at a time; it is safe to share between threads, which
then take turns (a thread waiting to retry does not hold the connection). For
parallel requests give each thread its own client.

Compiles and explains send the HLO text itself as the body, with the chip and
options in the query; runs send safetensors. Bodies are zstd-compressed when
that pays (body_coding.py). A connection the server closed while idle is
replaced at once; 503 answers and lost connections are retried as retry.py
says. Errors raise KilnError (see errors.py).
"""

import http.client
import os
import select
import socket
import ssl
import threading
import time
from urllib.parse import urlsplit

from . import wire, zstd
from .body_coding import RequestCompressor
from .errors import KilnConnectionError, KilnProtocolError, error_from_response
from .results import CompileResult, EntryPage, ExecutableBytes, ExplainResult
from .retry import RetryPolicy

DEFAULT_URL = "http://127.0.0.1:8470"
MAX_ANSWER_BYTES = 1 << 34
_sleep = time.sleep  # between retries (tests replace it)

# Failures that mean the connection broke (a kept-alive one may have been
# closed by the server while idle).
_BROKEN_CONNECTION = (http.client.RemoteDisconnected, http.client.CannotSendRequest,
                      http.client.IncompleteRead, ConnectionError)


class _Failure(Exception):
    """A failed send, with what the retry rules need to know about it."""

    def __init__(self, error, sent, stale, permanent=False):
        super().__init__(str(error))
        self.error = error      # the KilnError to raise if not retried
        self.sent = sent        # the whole request reached the server: it may have acted
        self.stale = stale      # a reused kept-alive connection broke
        self.permanent = permanent  # trying again cannot help (a name that does not resolve, TLS refused)


def _is_permanent(error):
    """Connect failures a retry cannot mend: the host name does not resolve,
    or TLS was refused (a certificate that does not verify, https to a
    plain-HTTP server). A refused or reset connection may mend (a server
    restarting)."""
    return isinstance(error, (socket.gaierror, ssl.SSLError))


def default_client_name():
    """$KILN_CLIENT (e.g. "job-42/host-3"), else "<host>/<pid>", cut to fit."""
    name = os.environ.get("KILN_CLIENT") or f"{socket.gethostname()}/{os.getpid()}"
    return "".join(c if 0x20 <= ord(c) < 0x7f else "?" for c in name)[:200]


class KilnClient:
    """A client for one kiln server.

    base_url: "http://host:port" (optionally with a path prefix, for a proxy).
    token: bearer token, when the server has an --auth-file.
    namespace: "shared" to use the shared namespace (the token must allow it).
    compress_requests: None or "auto" = zstd-compress bodies when it pays
      (body_coding.py: a zstd codec is installed, the server is not on
      loopback, the body is 64 KiB or more and shrinks); True or "always" =
      every body of 64 KiB or more (ValueError without a zstd codec); False or
      "never" = none.
    timeout: seconds for connecting and for each read (a compile can be slow).
    retry: a RetryPolicy (retry.py) for 503 answers and lost connections;
      RetryPolicy(max_attempts=1) never retries.
    client_name: who compiles, sent as X-Kiln-Client so the server can tell
      which job and host recompile (GET /v1/recompiles); default
      $KILN_CLIENT, else "<host>/<pid>". At most 200 printable ASCII
      characters (ValueError otherwise); "" sends none.
    """

    def __init__(self, base_url=DEFAULT_URL, token=None, *, namespace=None,
                 compress_requests=None, timeout=600.0, retry=None, client_name=None):
        parts = urlsplit(base_url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"base_url must be http(s)://host[:port], got {base_url!r}")
        self._scheme = parts.scheme
        self._host = parts.hostname
        self._port = parts.port
        self._prefix = parts.path.rstrip("/")
        self._timeout = timeout
        mode = _COMPRESSION_MODES.get(compress_requests, compress_requests)
        self._compressor = RequestCompressor(mode, self._host)
        self._retry = retry if retry is not None else RetryPolicy()
        if not isinstance(self._retry, RetryPolicy):
            raise TypeError(f"retry must be a RetryPolicy, got {type(self._retry).__name__}")
        self._headers = {"User-Agent": "kiln-python-client/2"}
        if token:
            self._headers["Authorization"] = f"Bearer {token}"
        if namespace:
            self._headers["X-Kiln-Namespace"] = namespace
        if zstd.available():
            self._headers["Accept-Encoding"] = "zstd"
        name = default_client_name() if client_name is None else client_name
        if len(name) > 200 or any(not (0x20 <= ord(c) < 0x7f) for c in name):
            raise ValueError(f"client_name must be at most 200 printable ASCII characters, got {name!r}")
        if name:
            self._headers["X-Kiln-Client"] = name
        self._lock = threading.Lock()
        self._connection = None
        self._connection_used = False

    # ---- compile and explain -------------------------------------------------

    def compile(self, hlo, chip=None, options=None, arg_shapes=None):
        """Compiles a module (or finds it cached); returns a CompileResult.

        hlo: HLO text, StableHLO text (`jax.jit(f).lower(...).as_text()`) or MLIR
        bytecode bytes (`jax.export`'s serialized module), as they come.
        chip: "v4", "v5e", "v5p", "v6e" or "tpu7x" (server default v5e).
        options: {"plan": "none"|"heuristic"|"given", "scoped_vmem_bytes": int}.
        arg_shapes: the entry's argument shapes ("s64[],f32[8,4]" or a list of
        shape strings), refining a StableHLO module's dynamic dimensions.
        """
        request = wire.compile_request(hlo, chip, options, arg_shapes=arg_shapes)
        return CompileResult.from_json(self._json(request))

    def compile_executable(self, hlo, chip=None, options=None, arg_shapes=None):
        """Like compile, but returns the executable's bytes (ExecutableBytes, with .key, .cache)."""
        answer = self._send(wire.compile_request(hlo, chip, options, return_executable=True, arg_shapes=arg_shapes))
        return ExecutableBytes.with_headers(answer.body, answer.headers)

    def explain(self, hlo, chip=None, options=None, arg_shapes=None):
        """Whether a module is cached and, if not, how it differs from the nearest entry."""
        return ExplainResult.from_json(self._json(wire.explain_request(hlo, chip, options, arg_shapes=arg_shapes)))

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

    def time(self, key):
        """The simulated device time without values (no pool chip taken): a
        dict {"key", "chip", "device_us", "flops", "bytes", "kernels": [...]}.
        KilnError 422 timing_unavailable when a loop's trip count depends on
        data (execute it instead)."""
        return self._json(wire.time_request(key))

    def trace(self, key):
        """The kernel timeline as Chrome/Perfetto trace-event JSON (a dict);
        json.dump it to a file and open it in ui.perfetto.dev."""
        return self._json(wire.trace_request(key))

    # ---- observation ---------------------------------------------------------

    def recompiles(self, name=None, min_keys=None):
        """Module names this tenant compiled as several programs and what
        changed between them: {"modules": [...], "storms": N}."""
        return self._json(wire.recompiles_request(name, min_keys))

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
        """Sends `request`, retrying as retry.py says; returns the Answer, or
        raises KilnError if its status is not in ok."""
        headers = dict(self._headers)
        headers.update(request.headers)
        body, coding = self._compressor.encode(request.body)
        if coding is not None:
            headers["Content-Encoding"] = coding
        target = self._prefix + request.path
        what = request.describe()
        start = time.monotonic()
        attempts = 0
        replaced_stale = False
        while True:
            attempts += 1
            try:
                with self._lock:
                    answer = self._round_trip(request.method, target, headers, body, what)
            except _Failure as failure:
                if failure.permanent or (failure.sent and not request.idempotent):
                    raise _after(failure.error, attempts) from None
                if failure.stale and not replaced_stale:
                    # The server closed a kept-alive connection: once, at once, on a new one.
                    replaced_stale = True
                    attempts -= 1
                    continue
                wait = self._retry.next_wait(attempts, time.monotonic() - start)
                if wait is None:
                    raise _after(failure.error, attempts) from None
                _sleep(wait)
                continue
            if answer.status in ok:
                return answer
            error = error_from_response(answer.status, answer.headers, answer.body, what)
            wait = None
            if answer.status == 503:
                wait = self._retry.next_wait(attempts, time.monotonic() - start, error.retry_after)
            if wait is None:
                raise _after(error, attempts)
            _sleep(wait)

    def _round_trip(self, method, target, headers, body, what):
        """One send and its answer on the kept connection; raises _Failure when
        the connection fails, KilnConnectionError when the answer times out."""
        reused = self._connection is not None and self._connection_used
        connection = self._connect(what)
        try:
            connection.request(method, target, body=body, headers=headers)
        except (OSError, http.client.HTTPException) as error:
            self._drop_connection()
            raise _Failure(KilnConnectionError(f"{what}: sending to {self._describe_server()} failed: {error}"),
                           sent=False, stale=reused) from error
        try:
            response = connection.getresponse()
            data = response.read()
        except TimeoutError as error:
            self._drop_connection()
            raise KilnConnectionError(f"{what}: no answer from {self._describe_server()} within "
                                      f"{self._timeout} s") from error
        except (OSError, http.client.HTTPException) as error:
            self._drop_connection()
            raise _Failure(KilnConnectionError(f"{what}: connection to {self._describe_server()} lost: {error}"),
                           sent=True, stale=reused and isinstance(error, _BROKEN_CONNECTION)) from error
        self._connection_used = True
        answer_headers = {name.lower(): value for name, value in response.getheaders()}
        if response.will_close:
            self._drop_connection()
        return wire.Answer(response.status, answer_headers, self._decode(answer_headers, data, what))

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

    def _connect(self, what):
        """The kept connection, or a new one when there is none or the server has
        closed it since the last answer (checked without blocking)."""
        if self._connection is not None and _peer_closed(self._connection.sock):
            self._drop_connection()
        if self._connection is None:
            kind = http.client.HTTPSConnection if self._scheme == "https" else http.client.HTTPConnection
            self._connection = kind(self._host, self._port, timeout=self._timeout)
            self._connection_used = False
            try:
                self._connection.connect()
                self._connection.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            except OSError as error:
                self._drop_connection()
                raise _Failure(KilnConnectionError(f"{what}: cannot connect to {self._describe_server()}: "
                                                   f"{error}"), sent=False, stale=False,
                               permanent=_is_permanent(error)) from error
        return self._connection

    def _drop_connection(self):
        if self._connection is not None:
            self._connection.close()
            self._connection = None

    def _describe_server(self):
        return f"{self._scheme}://{self._host}:{self._port or ''}{self._prefix}"

    def __repr__(self):
        return f"KilnClient({self._describe_server()!r})"


_COMPRESSION_MODES = {None: "auto", True: "always", False: "never"}


def _peer_closed(sock):
    """True when an idle kept-alive socket has become readable: the server closed
    it (or sent something unasked, which also makes it unusable)."""
    if sock is None:
        return True
    try:
        readable, _, _ = select.select([sock], [], [], 0)
    except (OSError, ValueError):
        return True
    return bool(readable)


def _after(error, attempts):
    """`error`, saying how many sends it took when there was more than one."""
    if attempts > 1:
        error.attempts = attempts
        error.args = (f"{error.args[0]} (after {attempts} attempts)",) + error.args[1:]
    return error
