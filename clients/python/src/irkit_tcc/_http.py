"""The HTTP transport: one keep-alive connection per thread, JSON bodies,
`Content-Type: application/json` on every request with a body, the bearer
token, and the API's error body turned into :class:`ApiError`."""

from __future__ import annotations

import http.client
import json
import threading
import urllib.parse
from typing import Any, Optional, Tuple


class ApiError(Exception):
    """The server refused a request: `status` (HTTP), `code` (the API's
    kind, e.g. ``conflict``), `diagnostic` (``TCC-H2xx``) and `message`."""

    def __init__(self, status: int, code: str, message: str, diagnostic: str = "") -> None:
        super().__init__(f"{code}: {message} (HTTP {status})")
        self.status = status
        self.code = code
        self.diagnostic = diagnostic
        self.message = message


class TransportError(Exception):
    """The server could not be reached or answered something that is not the API's JSON."""


class Transport:
    """Requests to one server."""

    def __init__(
        self, url: str, token: Optional[str] = None, timeout: float = 60.0, namespace: Optional[str] = None
    ) -> None:
        parsed = urllib.parse.urlsplit(url)
        if parsed.scheme not in ("http", "https") or not parsed.hostname:
            raise ValueError(f"not an http(s) URL: {url!r}")
        self.scheme = parsed.scheme
        self.host = parsed.hostname
        self.port = parsed.port
        self.base = parsed.path.rstrip("/")
        self.token = token
        self.namespace = namespace
        self.timeout = timeout
        self._local = threading.local()

    def _connection(self, timeout: float) -> http.client.HTTPConnection:
        conn = getattr(self._local, "conn", None)
        if conn is None:
            cls = http.client.HTTPSConnection if self.scheme == "https" else http.client.HTTPConnection
            conn = cls(self.host, self.port, timeout=timeout)
            self._local.conn = conn
        conn.timeout = timeout
        if conn.sock is not None:
            conn.sock.settimeout(timeout)
        return conn

    def _drop(self) -> None:
        conn = getattr(self._local, "conn", None)
        if conn is not None:
            conn.close()
        self._local.conn = None

    def close(self) -> None:
        """Closes this thread's connection."""
        self._drop()

    def request(
        self,
        method: str,
        path: str,
        body: Any = None,
        raw: Optional[bytes] = None,
        timeout: Optional[float] = None,
        traceparent: Optional[str] = None,
    ) -> Tuple[int, Any]:
        """Sends one request; returns (status, JSON body) for 2xx answers and
        raises :class:`ApiError` for the others."""
        headers = {"Accept": "application/json"}
        if traceparent is not None:
            headers["traceparent"] = traceparent
        data: Optional[bytes] = raw
        if body is not None:
            data = json.dumps(body).encode()
        if method == "POST":
            headers["Content-Type"] = "application/json"
            if data is None:
                data = b""
        if self.token:
            headers["Authorization"] = f"Bearer {self.token}"
        if self.namespace:
            headers["TCC-Namespace"] = self.namespace
        limit = timeout if timeout is not None else self.timeout
        # A kept-alive connection the server closed meanwhile fails at once:
        # one retry on a fresh connection (requests here are idempotent or
        # carry an id that makes them so).
        for attempt in (0, 1):
            conn = self._connection(limit)
            try:
                conn.request(method, self.base + path, body=data, headers=headers)
                resp = conn.getresponse()
                payload = resp.read()
                status = resp.status
                break
            except (http.client.HTTPException, OSError) as e:
                self._drop()
                if attempt == 1 or isinstance(e, TimeoutError):
                    raise TransportError(f"{method} {path}: {e}") from e
        try:
            doc = json.loads(payload) if payload.strip() else None
        except ValueError as e:
            raise TransportError(f"{method} {path}: HTTP {status} with a non-JSON body") from e
        if 200 <= status < 300:
            return status, doc
        err = doc.get("error", {}) if isinstance(doc, dict) else {}
        raise ApiError(
            status,
            str(err.get("code", "error")),
            str(err.get("message", "")),
            str(doc.get("code", "")) if isinstance(doc, dict) else "",
        )


def quote(segment: str) -> str:
    """A path segment, percent-encoded."""
    return urllib.parse.quote(segment, safe="")
