"""End to end: a real `irkit tcc serve` (SQLite; and two nodes on one
PostgreSQL schema when `IRKIT_CLIENTS_PG_URL` names one), a Python worker
process handling the order saga's effects, and an application starting 200
executions and awaiting every result. Midway the worker is SIGKILLed and
restarted, then a host node is SIGKILLed and restarted. Every execution
ends with the right result; every effect is journalled once, and a handler
ran again only under the same idempotency key (at most once per task in
flight at a kill)."""

from __future__ import annotations

import collections
import os
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from conftest import EXAMPLES, Server
import pytest

from irkit_tcc import Client, TransportError

ORDERS = 200
APPS = 20
SRC = str(Path(__file__).resolve().parents[1] / "src")


def retrying(fn, *args, **kw):
    """Calls `fn`, retrying while the host is down (at most 60 s)."""
    end = time.monotonic() + 60
    while True:
        try:
            return fn(*args, **kw)
        except TransportError:
            if time.monotonic() > end:
                raise
            time.sleep(0.1)


def expected(i: int):
    oid = f"o-{i}"
    if str(i).endswith("7"):
        return {"order": oid, "status": "compensated", "steps": ["reserve"], "undone": ["release"], "error": "card declined"}
    return {"order": oid, "status": "shipped", "steps": ["reserve", "charge", "ship"]}


@pytest.mark.parametrize("backend", ["sqlite", "postgres"])
def test_200_orders_survive_killed_workers_and_a_killed_host(tmp_path: Path, backend: str):
    flags = ["--workers", "16", "--lease-ms", "2000"]
    if backend == "sqlite":
        host = Server(tmp_path, flags)
        nodes = [host]
    else:
        url = os.environ.get("IRKIT_CLIENTS_PG_URL")
        if not url:
            pytest.skip("IRKIT_CLIENTS_PG_URL (a PostgreSQL URL with a scratch schema) is not set")
        # Two nodes; the application talks to both, the worker to node A,
        # and node B is the one killed.
        node_a = Server(tmp_path / "a", flags + ["--node-id", "node-a"], database=url)
        host = Server(tmp_path / "b", flags + ["--node-id", "node-b"], database=url)
        nodes = [node_a, host]
    nodes[0].register(EXAMPLES / "order_saga.py", "order_saga")
    log = tmp_path / "effects.log"

    def worker() -> subprocess.Popen:
        p = subprocess.Popen(
            [sys.executable, str(Path(__file__).with_name("e2e_worker.py")), nodes[0].url, SRC, str(log)],
            stdout=subprocess.PIPE, text=True,
        )
        assert p.stdout is not None and p.stdout.readline().strip() == "ready"
        return p

    w = worker()
    done = collections.Counter()
    lock = threading.Lock()
    results = {}

    def order(i: int) -> None:
        c = Client(nodes[i % len(nodes)].url)
        eid = f"order-{i:03d}"
        retrying(c.start, "order_saga", {"id": f"o-{i}"}, id=eid)
        e = retrying(c.result, eid)
        with lock:
            results[i] = e
            done["n"] += 1

    def progress() -> int:
        with lock:
            return done["n"]

    try:
        with ThreadPoolExecutor(APPS) as apps:
            futures = [apps.submit(order, i) for i in range(ORDERS)]
            while progress() < ORDERS // 3:
                time.sleep(0.01)
            w.kill()
            w.wait()
            w = worker()
            while progress() < 2 * ORDERS // 3:
                time.sleep(0.01)
            host.kill()
            host.start()
            for f in futures:
                f.result(timeout=120)
    finally:
        w.kill()
        for n in nodes:
            n.stop()

    assert len(results) == ORDERS
    for i, e in results.items():
        assert e.status == "completed", (i, e)
        assert e.result == expected(i), (i, e.result)

    # Journal: each execution's three effects, once each.
    host.start()
    try:
        c = Client(host.url)
        journalled = set()
        for i in range(ORDERS):
            _, j = c._http.request("GET", f"/v1/executions/order-{i:03d}/effects")
            keys = [x["idempotency_key"] for x in j["effects"]]
            assert len(keys) == 3 and len(set(keys)) == 3, (i, keys)
            journalled.update(keys)
    finally:
        host.stop()
    runs = collections.Counter(log.read_text().split())
    assert set(runs) == journalled, "every handler run belongs to a journalled effect and back"
    repeated = sum(n - 1 for n in runs.values())
    # Repeats only under the same key, and only for tasks in flight at a
    # kill (8 handlers per worker, plus answers lost with the host).
    assert repeated <= 3 * 8, runs.most_common(5)
