"""The application's side: start executions, await their results, send
events, cancel, inspect."""

from __future__ import annotations

import time
import urllib.parse
from dataclasses import dataclass, field
from typing import Any, Dict, Iterator, List, Optional, Sequence, Union

from ._http import ApiError, Transport, quote
from .values import to_plain

#: Statuses of an execution that has ended.
ENDED = ("completed", "failed", "cancelled")

#: The longest single long poll (below the server's default 30 s request timeout).
LONG_POLL = 25.0


@dataclass
class Execution:
    """An execution's status (the host's status JSON, decoded)."""

    id: str
    status: str
    #: The result as plain JSON (None until it ended; a failed execution's thrown value).
    result: Any = None
    #: A failed execution's message.
    message: Optional[str] = None
    #: The namespace owning the execution (``default`` from a host without namespaces).
    namespace: str = "default"
    #: The whole status JSON as the host sent it (tagged result, revision, pending…).
    raw: Dict[str, Any] = field(default_factory=dict)

    @property
    def ended(self) -> bool:
        """Whether it is completed, failed or cancelled."""
        return self.status in ENDED

    @classmethod
    def from_json(cls, j: Dict[str, Any]) -> "Execution":
        return cls(
            id=str(j.get("id", "")),
            status=str(j.get("status", "")),
            result=to_plain(j["result"]) if "result" in j else None,
            message=j.get("message"),
            namespace=str(j.get("namespace", "default")),
            raw=j,
        )


class ExecutionFailed(Exception):
    """Raised by :meth:`Client.run` when the execution failed or was cancelled."""

    def __init__(self, execution: Execution) -> None:
        super().__init__(f"execution {execution.id} {execution.status}: {execution.message or ''}")
        self.execution = execution


class Client:
    """A client of one `irkit tcc serve` (or a proxy in front of it).

    ``url`` defaults to ``http://127.0.0.1:7420``; ``token`` is the bearer
    token (``--token`` of the server); ``namespace`` is sent as the
    ``TCC-Namespace`` header (default: the token's own namespace)."""

    def __init__(
        self,
        url: str = "http://127.0.0.1:7420",
        token: Optional[str] = None,
        timeout: float = 60.0,
        namespace: Optional[str] = None,
    ) -> None:
        self._http = Transport(url, token, timeout, namespace)

    def close(self) -> None:
        """Closes this thread's connection."""
        self._http.close()

    def register(self, artifact: Union[bytes, str], name: str) -> str:
        """Registers an artifact (bytes, or the path of an artifact JSON file)
        under ``name``; returns its hash. Compile sources with
        ``irkit tcc compile`` (or register them with ``irkit tcc register``)."""
        data = artifact if isinstance(artifact, bytes) else open(artifact, "rb").read()
        _, j = self._http.request("POST", f"/v1/artifacts?name={quote(name)}", raw=data)
        return str(j["hash"])

    def start(
        self, program: str, *args: Any, id: Optional[str] = None, traceparent: Optional[str] = None
    ) -> str:
        """Starts ``program`` (name or hash) with plain JSON ``args``; returns
        the execution id. With ``id``, starting again is harmless: an
        execution with that id already exists, so its id is returned (the
        arguments are not compared). With ``traceparent`` (a W3C trace
        context), the execution's spans continue that trace and its effects
        get it (webhooks as a header, workers as ``Task.traceparent``)."""
        body: Dict[str, Any] = {"program": program, "args": list(args)}
        if id is not None:
            body["id"] = id
        try:
            _, j = self._http.request("POST", "/v1/executions", body, traceparent=traceparent)
        except ApiError as e:
            if id is not None and e.status == 409:
                return id
            raise
        return str(j["id"])

    def result(self, id: str, wait: Optional[float] = None) -> Execution:
        """The execution's status once it ended, or when ``wait`` seconds have
        passed (``None``: wait as long as it takes; ``0``: now). Waiting is a
        long poll: the host answers as soon as the execution ends."""
        deadline = None if wait is None else time.monotonic() + wait
        while True:
            left = LONG_POLL if deadline is None else max(0.0, deadline - time.monotonic())
            step = min(left, LONG_POLL)
            _, j = self._http.request(
                "GET",
                f"/v1/executions/{quote(id)}/result?wait={int(step * 1000)}ms",
                timeout=step + self._http.timeout,
            )
            e = Execution.from_json(j)
            if e.ended or (deadline is not None and time.monotonic() >= deadline):
                return e

    def run(
        self,
        program: str,
        *args: Any,
        id: Optional[str] = None,
        wait: Optional[float] = None,
        traceparent: Optional[str] = None,
    ) -> Any:
        """Starts ``program`` and awaits it; returns its result (plain JSON).
        Raises :class:`ExecutionFailed` when it failed or was cancelled, and
        ``TimeoutError`` when ``wait`` seconds passed first.

        One request starts and awaits (``POST /v1/executions?wait=``); only
        an execution still running after the first long poll, or one that
        already existed under ``id``, is awaited with :meth:`result`."""
        deadline = None if wait is None else time.monotonic() + wait
        first = LONG_POLL if wait is None else min(max(0.0, wait), LONG_POLL)
        body: Dict[str, Any] = {"program": program, "args": list(args)}
        if id is not None:
            body["id"] = id
        e: Optional[Execution] = None
        try:
            _, j = self._http.request(
                "POST",
                f"/v1/executions?wait={int(first * 1000)}ms",
                body,
                timeout=first + self._http.timeout,
                traceparent=traceparent,
            )
            e = Execution.from_json(j)
            eid = e.id
        except ApiError as err:
            if id is None or err.status != 409:
                raise
            eid = id
        if e is None or not e.ended:
            left = None if deadline is None else max(0.0, deadline - time.monotonic())
            e = self.result(eid, wait=left)
        if not e.ended:
            raise TimeoutError(f"execution {eid} is still {e.status}")
        if e.status != "completed":
            raise ExecutionFailed(e)
        return e.result

    def status(self, id: str) -> Execution:
        """The execution's status now."""
        _, j = self._http.request("GET", f"/v1/executions/{quote(id)}")
        return Execution.from_json(j)

    def send(self, id: str, event: str, payload: Any = None) -> None:
        """Sends event ``event`` with a plain JSON ``payload``."""
        self._http.request("POST", f"/v1/executions/{quote(id)}/events", {"name": event, "payload": payload})

    def cancel(self, id: str) -> None:
        """Requests cancellation."""
        self._http.request("POST", f"/v1/executions/{quote(id)}/cancel")

    def list(self, status: Optional[str] = None, program: Optional[str] = None, limit: int = 100) -> Iterator[Execution]:
        """Every execution (optionally of one status or program), oldest first;
        pages of ``limit`` are fetched as the iterator advances."""
        after: Optional[int] = None
        while True:
            q: List[Sequence[str]] = [("limit", str(limit))]
            if status:
                q.append(("status", status))
            if program:
                q.append(("program", program))
            if after is not None:
                q.append(("after", str(after)))
            _, j = self._http.request("GET", "/v1/executions?" + urllib.parse.urlencode(q))
            for e in j.get("executions", []):
                yield Execution.from_json(e)
            after = j.get("next_after")
            if after is None:
                return
