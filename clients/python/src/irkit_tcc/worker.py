"""The effect worker: handlers for effect keys, run on tasks pulled from
the host (provider kind ``worker``).

A :class:`Worker` long-polls ``POST /v1/tasks/poll`` for the patterns of
its handlers, runs each task's handler on a thread pool (at most
``concurrency`` at once), renews the leases of running tasks (every third
of ``lease``), and answers with complete (the handler's return value) or
fail (the message of the exception it raised; a result that is not JSON
fails too). Answers go in ``POST /v1/tasks/answers``: one sender thread
sends what finished, so the answers that finish while a request is on its
way go together in the next (a host without that route gets each on its
own route); a task's slot frees once its answer was sent. An answer
refused because the lease was lost (the task was handed to another
worker) is dropped. On
SIGTERM or SIGINT it stops polling, lets running handlers finish and
answers them, then :meth:`Worker.run` returns.

A task can run more than once (a worker that died after the handler ran,
before its answer was stored): handlers get ``task.idempotency_key`` to
make the effect itself idempotent."""

from __future__ import annotations

import asyncio
import inspect
import json
import logging
import signal
import socket
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, Callable, Dict, List, Optional, Tuple

from ._http import ApiError, Transport, TransportError, quote

log = logging.getLogger("irkit_tcc.worker")


@dataclass
class Task:
    """One effect to run."""

    #: The effect key (e.g. ``payment.charge``).
    key: str
    #: The effect's input as plain JSON.
    input: Any
    #: ``{execution id}:{key}``: the same for every attempt of this effect.
    idempotency_key: str
    #: The execution that asked.
    execution_id: str
    #: 1 for the first hand-out, then 2, 3… after lost leases.
    attempt: int
    lease: str
    #: The W3C trace context of the effect's call (its span's when the host
    #: exports traces, else the one the execution was started with), to
    #: continue the trace in the handler; ``None`` when there is none.
    traceparent: Optional[str] = None


Handler = Callable[[Task], Any]

#: Most answers sent in one request (the host's limit).
MAX_BATCH = 100


def _pattern_matches(pattern: str, key: str) -> bool:
    parts = pattern.split("*")
    if len(parts) == 1:
        return pattern == key
    first, last = parts[0], parts[-1]
    if not key.startswith(first) or not key.endswith(last) or len(key) < len(first) + len(last):
        return False
    rest = key[len(first) : len(key) - len(last)]
    for mid in parts[1:-1]:
        i = rest.find(mid)
        if i < 0:
            return False
        rest = rest[i + len(mid) :]
    return True


class Worker:
    """Runs effect handlers for one host.

    ``concurrency`` bounds the handlers running at once; ``lease`` (seconds)
    is how long a task stays with this worker without a heartbeat;
    ``poll_wait`` (seconds) is the longest poll, and so the longest
    :meth:`stop` waits before polling ends."""

    def __init__(
        self,
        url: str = "http://127.0.0.1:7420",
        token: Optional[str] = None,
        *,
        name: Optional[str] = None,
        concurrency: int = 8,
        lease: float = 30.0,
        poll_wait: float = 10.0,
        namespace: Optional[str] = None,
    ) -> None:
        if concurrency < 1:
            raise ValueError("concurrency must be at least 1")
        self._http = Transport(url, token, timeout=max(30.0, poll_wait + 10.0), namespace=namespace)
        self.name = name or f"{socket.gethostname()}-{id(self):x}"
        self.concurrency = concurrency
        self.lease = lease
        self.poll_wait = poll_wait
        self._handlers: List[Tuple[str, Handler]] = []
        self._stop = threading.Event()
        self._lock = threading.Lock()
        # Signalled when a slot frees (run's loop waits on it when every
        # slot is taken) and when the worker stops.
        self._slots = threading.Condition(self._lock)
        # Signalled when the worker stops and when its last task ends (the
        # heartbeat thread waits on it between rounds).
        self._idle = threading.Condition(self._lock)
        self._running: Dict[str, Task] = {}
        # Answers of finished handlers not sent yet: (task, answer, its
        # JSON); signalled when one is added and when the worker stops.
        self._outbox: List[Tuple[Task, Dict[str, Any], bytes]] = []
        self._outbox_ready = threading.Condition(self._lock)
        # Whether the host takes `POST /v1/tasks/answers` (a host without
        # it answers 404: then each answer goes to its own route).
        self._batches = True

    def effect(self, pattern: str) -> Callable[[Handler], Handler]:
        """Registers the decorated function for effect keys matching
        ``pattern`` (``*`` wildcards; the first registered match wins). It
        gets a :class:`Task` and returns the result (plain JSON); an
        exception fails the effect with its message. ``async def``
        functions are run to completion on the worker's thread."""

        def register(fn: Handler) -> Handler:
            self._handlers.append((pattern, fn))
            return fn

        return register

    def stop(self) -> None:
        """Asks :meth:`run` to stop: no more polls, running handlers finish."""
        self._stop.set()
        with self._lock:
            self._slots.notify_all()
            self._idle.notify_all()
            self._outbox_ready.notify_all()

    def _handler(self, key: str) -> Optional[Handler]:
        for pattern, fn in self._handlers:
            if _pattern_matches(pattern, key):
                return fn
        return None

    def _answer(self, task: Task, answer: Dict[str, Any]) -> None:
        """Sends one answer to its own route (``complete`` or ``fail``),
        retrying transport failures (a host restarting) until the lease
        would have expired; a refusal is final."""
        body = {k: v for k, v in answer.items() if k not in ("id", "outcome")}
        path = "complete" if answer["outcome"] == "complete" else "fail"
        give_up = time.monotonic() + self.lease
        pause = 0.1
        while True:
            try:
                self._http.request("POST", f"/v1/tasks/{quote(task.idempotency_key)}/{path}", body)
                return
            except ApiError as e:
                _log_refusal(task, e.status, str(e))
                return
            except TransportError as e:
                if time.monotonic() > give_up:
                    log.error("task %s: cannot answer: %s", task.idempotency_key, e)
                    return
                time.sleep(pause)
                pause = min(pause * 2, 2.0)

    def _send(self, batch: List[Tuple[Task, Dict[str, Any], bytes]]) -> None:
        """Sends the answers of ``batch`` in one ``POST /v1/tasks/answers``,
        retrying transport failures until the first lease would have
        expired; each refused answer is logged and dropped."""
        if self._batches:
            body = b'{"answers":[' + b",".join(encoded for _, _, encoded in batch) + b"]}"
            give_up = time.monotonic() + self.lease
            pause = 0.1
            while True:
                try:
                    _, reply = self._http.request("POST", "/v1/tasks/answers", raw=body)
                except ApiError as e:
                    if e.status in (404, 405):
                        self._batches = False
                        break
                    if len(batch) > 1 and e.status in (400, 413):
                        # One answer the host refuses (too large, say) must
                        # not take the others with it: each on its own.
                        break
                    log.error("answers refused: %s", e)
                    return
                except TransportError as e:
                    if time.monotonic() > give_up:
                        log.error("cannot answer %d tasks: %s", len(batch), e)
                        return
                    time.sleep(pause)
                    pause = min(pause * 2, 2.0)
                    continue
                for (task, _, _), r in zip(batch, reply.get("answers", [])):
                    if not r.get("accepted"):
                        err = r.get("error", {})
                        _log_refusal(task, int(r.get("status", 0)), f"{err.get('code')}: {err.get('message')}")
                return
        for task, answer, _ in batch:
            self._answer(task, answer)

    def _answers(self) -> None:
        """Sends finished handlers' answers: everything waiting in one
        request, so that answers that finish while one is on its way go
        together in the next (at most ``MAX_BATCH``). A task's slot frees
        once its answer was sent. Ends once the worker stopped and no task
        runs."""
        while True:
            with self._lock:
                while not self._outbox:
                    if self._stop.is_set() and not self._running:
                        return
                    self._outbox_ready.wait()
                batch, self._outbox = self._outbox[:MAX_BATCH], self._outbox[MAX_BATCH:]
            try:
                self._send(batch)
            finally:
                with self._lock:
                    for task, _, _ in batch:
                        self._running.pop(task.idempotency_key, None)
                    self._slots.notify_all()
                    if not self._running:
                        self._idle.notify_all()

    def _run_task(self, task: Task) -> None:
        answer: Dict[str, Any] = {"id": task.idempotency_key, "lease": task.lease}
        try:
            fn = self._handler(task.key)
            if fn is None:
                raise LookupError(f"no handler for effect {task.key!r}")
            out = fn(task)
            if inspect.isawaitable(out):
                out = asyncio.run(_awaited(out))
            answer.update(outcome="complete", result=out)
            encoded = json.dumps(answer).encode()
        except Exception as e:  # noqa: BLE001 - every failure is the effect's
            # (a result that is not JSON included)
            answer.pop("result", None)
            answer.update(outcome="fail", message=str(e) or type(e).__name__)
            encoded = json.dumps(answer).encode()
        with self._lock:
            self._outbox.append((task, answer, encoded))
            self._outbox_ready.notify()

    def _heartbeats(self) -> None:
        """Renews each running task's lease every third of the lease; ends
        once the worker stopped and no task runs."""
        period = max(0.05, self.lease / 3)
        beaten: Dict[str, float] = {}
        while True:
            with self._lock:
                if self._stop.is_set() and not self._running:
                    return
                self._idle.wait(period)
                now = time.monotonic()
                due = []
                for key, t in self._running.items():
                    last = beaten.setdefault(key, now)
                    if now - last >= period:
                        due.append(t)
                for key in list(beaten):
                    if key not in self._running:
                        del beaten[key]
            for t in due:
                beaten[t.idempotency_key] = time.monotonic()
                try:
                    self._http.request(
                        "POST",
                        f"/v1/tasks/{quote(t.idempotency_key)}/heartbeat",
                        {"lease": t.lease, "lease_ms": int(self.lease * 1000)},
                    )
                except ApiError:
                    log.warning("task %s: lease lost", t.idempotency_key)
                except TransportError as e:
                    log.warning("task %s: heartbeat failed: %s", t.idempotency_key, e)

    def run(self, install_signals: bool = True) -> None:
        """Polls and runs tasks until :meth:`stop` (or SIGTERM/SIGINT when
        ``install_signals`` and called on the main thread)."""
        if not self._handlers:
            raise ValueError("no effect handlers registered")
        if install_signals and threading.current_thread() is threading.main_thread():
            for sig in (signal.SIGTERM, signal.SIGINT):
                signal.signal(sig, lambda *_: self.stop())
        patterns = [p for p, _ in self._handlers]
        beat = threading.Thread(target=self._heartbeats, name="irkit-tcc-heartbeat", daemon=True)
        beat.start()
        sender = threading.Thread(target=self._answers, name="irkit-tcc-answers", daemon=True)
        sender.start()
        pause = 0.1
        with ThreadPoolExecutor(max_workers=self.concurrency, thread_name_prefix="irkit-tcc-task") as pool:
            while not self._stop.is_set():
                with self._slots:
                    while len(self._running) >= self.concurrency and not self._stop.is_set():
                        self._slots.wait()
                    free = self.concurrency - len(self._running)
                if self._stop.is_set():
                    break
                try:
                    _, j = self._http.request(
                        "POST",
                        "/v1/tasks/poll",
                        {
                            "patterns": patterns,
                            "worker": self.name,
                            "lease_ms": int(self.lease * 1000),
                            "max": free,
                            "wait": f"{int(self.poll_wait * 1000)}ms",
                        },
                    )
                    pause = 0.1
                except (TransportError, ApiError) as e:
                    log.warning("poll failed: %s", e)
                    self._stop.wait(pause)
                    pause = min(pause * 2, 2.0)
                    continue
                for t in j.get("tasks", []):
                    task = Task(
                        key=t["key"],
                        input=t.get("input"),
                        idempotency_key=t["idempotency_key"],
                        execution_id=t["execution_id"],
                        attempt=int(t.get("attempt", 1)),
                        lease=t["lease"],
                        traceparent=t.get("traceparent"),
                    )
                    with self._slots:
                        self._running[task.idempotency_key] = task
                    pool.submit(self._run_task, task)
        sender.join()
        beat.join()


def _log_refusal(task: Task, status: int, why: str) -> None:
    if status == 409:
        log.warning("task %s: lease lost, answer dropped", task.idempotency_key)
    else:
        log.error("task %s: answer refused: %s", task.idempotency_key, why)


async def _awaited(aw: Any) -> Any:
    return await aw
