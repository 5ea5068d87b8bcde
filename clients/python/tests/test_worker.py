"""Worker against a real server: the order saga's effects handled in
Python, failures compensated, bounded concurrency, graceful SIGTERM."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

from irkit_tcc import Client, Task, Worker


TRACEPARENT = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"


def saga_worker(url: str, declined=(), concurrency: int = 4, delay: float = 0.0, traces=None):
    w = Worker(url, concurrency=concurrency, lease=5.0, poll_wait=1.0)
    seen = []
    lock = threading.Lock()
    running = [0, 0]  # now, most

    def track(task: Task):
        with lock:
            seen.append((task.key, task.idempotency_key, task.execution_id, task.attempt))
            if traces is not None:
                traces.append((task.execution_id, task.traceparent))
            running[0] += 1
            running[1] = max(running[1], running[0])
        try:
            time.sleep(delay)
        finally:
            with lock:
                running[0] -= 1

    @w.effect("inventory.*")
    def inventory(task: Task):
        track(task)
        return {"ok": True}

    @w.effect("payment.*")
    def payment(task: Task):
        track(task)
        if task.key == "payment.charge" and task.execution_id in declined:
            raise RuntimeError("card declined")
        return {"charged": True}

    @w.effect("shipping.ship")
    def ship(task: Task):
        track(task)
        return "shipped"

    return w, seen, running


def test_the_saga_runs_on_a_python_worker(server):
    traces = []
    w, seen, _ = saga_worker(server.url, declined={"order-bad"}, traces=traces)
    t = threading.Thread(target=w.run, kwargs={"install_signals": False})
    t.start()
    try:
        c = Client(server.url)
        assert c.run("order_saga", {"id": "o-1"}, id="order-ok", wait=30, traceparent=TRACEPARENT) == {
            "order": "o-1", "status": "shipped", "steps": ["reserve", "charge", "ship"],
        }
        r = c.run("order_saga", {"id": "o-2"}, id="order-bad", wait=30)
        assert r["status"] == "compensated"
        assert r["steps"] == ["reserve"] and r["undone"] == ["release"]
        assert "card declined" in str(r["error"])
    finally:
        w.stop()
        t.join(30)
    keys = sorted(k for k, i, e, a in seen if e == "order-ok")
    assert keys == ["inventory.reserve", "payment.charge", "shipping.ship"]
    # The idempotency key reaches the handler: {execution}:{key}.
    assert all(i == f"{e}:{k}" for k, i, e, a in seen)
    # The start's trace context reaches the handlers of its effects (the
    # test server exports no spans: passed on unchanged), and only theirs.
    assert {tp for e, tp in traces if e == "order-ok"} == {TRACEPARENT}
    assert {tp for e, tp in traces if e == "order-bad"} == {None}


def test_handlers_run_concurrently_within_the_bound(server):
    w, seen, running = saga_worker(server.url, concurrency=2, delay=0.15)
    t = threading.Thread(target=w.run, kwargs={"install_signals": False})
    t.start()
    try:
        c = Client(server.url)
        ids = [c.start("order_saga", {"id": f"o-{i}"}) for i in range(4)]
        for i in ids:
            assert c.result(i, wait=60).status == "completed"
    finally:
        w.stop()
        t.join(30)
    assert len(seen) == 12
    assert running[1] == 2, running


WORKER_SCRIPT = textwrap.dedent(
    """
    import sys, time
    sys.path.insert(0, sys.argv[2])
    from irkit_tcc import Worker
    w = Worker(sys.argv[1], concurrency=2, lease=5.0, poll_wait=0.5)

    @w.effect("*")
    def slow(task):
        print("started", task.key, flush=True)
        time.sleep(1.0)
        print("finished", task.key, flush=True)
        return "done"

    w.run()
    print("stopped", flush=True)
    """
)


def test_sigterm_lets_running_handlers_finish(server, tmp_path: Path):
    script = tmp_path / "worker.py"
    script.write_text(WORKER_SCRIPT)
    src = str(Path(__file__).resolve().parents[1] / "src")
    p = subprocess.Popen([sys.executable, str(script), server.url, src], stdout=subprocess.PIPE, text=True)
    try:
        c = Client(server.url)
        eid = c.start("order_saga", {"id": "o-term"})
        assert p.stdout is not None
        assert p.stdout.readline().strip() == "started inventory.reserve"
        p.send_signal(signal.SIGTERM)
        assert p.wait(timeout=20) == 0
        out = p.stdout.read()
        assert "finished inventory.reserve" in out and out.strip().endswith("stopped")
        # A task taken by the poll in flight when the signal came runs too:
        # every task started is finished.
        started = ["inventory.reserve"] + [l.split()[1] for l in out.splitlines() if l.startswith("started")]
        assert [l.split()[1] for l in out.splitlines() if l.startswith("finished")] == started
        # The answer was delivered: the saga moved on to the charge.
        task = c._http.request("GET", f"/v1/tasks/{eid}:inventory.reserve")[1]
        assert task["state"] == "completed"
    finally:
        if p.poll() is None:
            p.kill()


def test_answers_that_finish_together_go_in_one_request(server):
    """Six handlers finish together: the answers that wait while the first
    request is on its way go together in the next, so six answers take at
    most two requests. A result that is not JSON fails its own effect (the
    saga compensates), not the batch it was in."""
    orders = [f"batch-{i}" for i in range(6)]
    w = Worker(server.url, concurrency=8, lease=10.0, poll_wait=1.0)
    barrier = threading.Barrier(6, timeout=20)
    batches = []
    send = w._http.request

    def recording(method, path, body=None, raw=None, **kw):
        if path == "/v1/tasks/answers":
            assert raw is not None
            import json

            batches.append(sorted(a["id"] for a in json.loads(raw)["answers"]))
            if len(batches) == 1:
                # Hold the first request until the other reserves' answers
                # wait in the outbox.
                deadline = time.monotonic() + 5
                while time.monotonic() < deadline:
                    with w._lock:
                        if len(batches[0]) + len(w._outbox) >= 6:
                            break
                    time.sleep(0.01)
        return send(method, path, body, raw, **kw)

    w._http.request = recording  # type: ignore[method-assign]

    @w.effect("inventory.*")
    def inventory(task: Task):
        if task.key == "inventory.reserve":
            barrier.wait()
        return {"ok": True}

    @w.effect("payment.*")
    def charge(task: Task):
        return {1, 2} if task.execution_id == "batch-0" else {"charged": True}

    @w.effect("shipping.*")
    def ship(task: Task):
        return "shipped"

    t = threading.Thread(target=w.run, kwargs={"install_signals": False})
    t.start()
    try:
        c = Client(server.url)
        for o in orders:
            c.start("order_saga", {"id": o}, id=o)
        results = {o: c.result(o, wait=60) for o in orders}
    finally:
        w.stop()
        t.join(30)
    reserves = [i for b in batches[:2] for i in b if i.endswith(":inventory.reserve")]
    assert sorted(reserves) == sorted(f"{o}:inventory.reserve" for o in orders), batches
    for o in orders[1:]:
        assert results[o].status == "completed" and results[o].result["status"] == "shipped", results[o]
    bad = results["batch-0"].result
    assert isinstance(bad, dict), results["batch-0"]
    assert bad["status"] == "compensated" and "not JSON serializable" in str(bad["error"]), bad


def test_a_batch_the_host_refuses_goes_answer_by_answer():
    """A batch refused whole (413: one result too large) is sent again one
    answer per request, so the others are not lost with it; a host without
    the batch route (404) gets every later answer on its own route."""
    from irkit_tcc import ApiError

    w = Worker("http://127.0.0.1:9", lease=1.0)
    calls = []

    def host(method, path, body=None, raw=None, **kw):
        calls.append(path)
        if path == "/v1/tasks/answers" or path == "/v1/tasks/t-big/complete":
            raise ApiError(413, "payload_too_large", "more than 100000 JSON values")
        return 200, {"accepted": True}

    w._http.request = host  # type: ignore[method-assign]
    tasks = [Task(key="k", input=None, idempotency_key=f"t-{n}", execution_id="e", attempt=1, lease="l") for n in ("a", "big", "b")]
    batch = [(t, {"id": t.idempotency_key, "lease": "l", "outcome": "complete", "result": 1}, b"{}") for t in tasks]
    w._send(batch)
    assert calls == ["/v1/tasks/answers", "/v1/tasks/t-a/complete", "/v1/tasks/t-big/complete", "/v1/tasks/t-b/complete"]
    assert w._batches, "a refused batch does not stop batching"

    calls.clear()

    def old_host(method, path, body=None, raw=None, **kw):
        calls.append(path)
        if path == "/v1/tasks/answers":
            raise ApiError(404, "not_found", "no route")
        return 200, {"accepted": True}

    w._http.request = old_host  # type: ignore[method-assign]
    w._send(batch[:1])
    w._send(batch[2:])
    assert calls == ["/v1/tasks/answers", "/v1/tasks/t-a/complete", "/v1/tasks/t-b/complete"]
    assert not w._batches
