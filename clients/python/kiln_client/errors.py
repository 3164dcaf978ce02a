"""Exceptions the client raises.

Every failure of a call is a KilnError: an error answer from the server
(`status` and the body's `code` and `message`), a broken connection
(KilnConnectionError, status 0) or an answer that breaks the API contract
(KilnProtocolError). Programming errors in arguments raise ValueError or
TypeError before anything is sent.
"""

import json


class KilnError(Exception):
    """An error answer: HTTP `status`, stable `code`, human `message`.

    HLO errors also carry `line` and `column` (1-based, in the HLO text);
    input mismatches carry `parameter` (the input's name, "0", "1", ...),
    `expected` and `got`; 503 answers carry `retry_after` (seconds).
    `attempts` is how many times the request was sent (more than 1 after
    retries, see retry.py).
    """

    attempts = 1

    def __init__(self, status, code, message, *, line=None, column=None, parameter=None,
                 expected=None, got=None, retry_after=None, body=None):
        super().__init__(f"{status} {code}: {message}" if status else f"{code}: {message}")
        self.status = status
        self.code = code
        self.message = message
        self.line = line
        self.column = column
        self.parameter = parameter
        self.expected = expected
        self.got = got
        self.retry_after = retry_after
        self.body = body  # the decoded error object, when there was one


class KilnConnectionError(KilnError):
    """The server could not be reached or dropped the connection."""

    def __init__(self, message):
        super().__init__(0, "connection_error", message)


class KilnProtocolError(KilnError):
    """The server answered something the API does not allow (a client or server bug)."""

    def __init__(self, status, message):
        super().__init__(status, "bad_response", message)


def error_from_response(status, headers, body, what):
    """The KilnError for an error answer to `what` ("POST /v1/compile").

    `headers` maps lower-case names to values. A body that is not the API's
    JSON error (an empty HEAD answer, a proxy's HTML page) still yields an
    error, with code "http_<status>".
    """
    retry_after = headers.get("retry-after")
    retry_after = int(retry_after) if retry_after and retry_after.isdigit() else None
    error = None
    if body:
        try:
            error = json.loads(body).get("error")
        except (ValueError, AttributeError):
            error = None
    if not isinstance(error, dict) or not isinstance(error.get("code"), str):
        snippet = body[:200].decode("utf-8", "replace").strip() if body else "(no body)"
        return KilnError(status, f"http_{status}", f"{what}: {snippet}", retry_after=retry_after)

    def integer(name):
        value = error.get(name)
        return value if isinstance(value, int) and not isinstance(value, bool) else None

    return KilnError(status, error["code"], str(error.get("message", "")),
                     line=integer("line"), column=integer("column"),
                     parameter=error.get("parameter"), expected=error.get("expected"),
                     got=error.get("got"), retry_after=retry_after, body=error)
