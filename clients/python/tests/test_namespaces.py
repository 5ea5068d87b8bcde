"""Client and worker in a namespace other than `default`, against a real
`irkit tcc serve` with a tokens file (acme's token, globex's, and one of
both): programs registered, executions started, evented, awaited and
listed in acme; a worker of acme handles acme's effects while a worker of
globex polling at the same time gets none; globex's client sees nothing
of acme's (each by-id call answered as for an unknown execution)."""

from __future__ import annotations

import subprocess
import threading
from pathlib import Path

import pytest

from conftest import EXAMPLES, Server, irkit_path
from irkit_tcc import ApiError, Client, Task, Worker

ACME = "tok-acme"
GLOBEX = "tok-globex"
BOTH = "tok-both"


@pytest.fixture
def ns_server(tmp_path: Path):
    tokens = tmp_path / "tokens"
    tokens.write_text(f"acme {ACME}\nglobex {GLOBEX}\nacme,globex {BOTH}\n")
    s = Server(tmp_path / "host", ["--tokens-file", str(tokens)])
    for source, name in [(EXAMPLES / "approval.py", "approval"), (EXAMPLES / "order_saga.py", "order_saga")]:
        subprocess.run(
            [irkit_path(), "tcc", "register", str(source), "--name", name,
             "--server", s.url, "--token", ACME],
            check=True, capture_output=True,
        )
    try:
        yield s
    finally:
        s.stop()


def unknown(call) -> None:
    with pytest.raises(ApiError) as err:
        call()
    assert err.value.status == 404 and err.value.code == "not_found", err.value


def test_a_client_works_in_its_namespace_and_another_sees_nothing(ns_server):
    acme = Client(ns_server.url, token=ACME)  # a token of one namespace acts in it
    both = Client(ns_server.url, token=BOTH, namespace="acme")
    globex = Client(ns_server.url, token=GLOBEX)

    eid = acme.start("approval", {"id": "r-1"}, id="acme-approval")
    assert acme.status(eid).namespace == "acme"
    assert not acme.result(eid, wait=0.2).ended

    # globex: acme's execution is unknown, its program name too.
    unknown(lambda: globex.status(eid))
    unknown(lambda: globex.result(eid, wait=0.1))
    unknown(lambda: globex.send(eid, "approval.decision", "reject"))
    unknown(lambda: globex.cancel(eid))
    assert list(globex.list()) == []
    with pytest.raises(ApiError) as err:
        globex.start("approval", {"id": "g"})
    assert err.value.status == 404 and err.value.code == "unknown_program"
    # Naming acme with globex's token is refused.
    with pytest.raises(ApiError) as err:
        Client(ns_server.url, token=GLOBEX, namespace="acme").status(eid)
    assert err.value.status == 403 and err.value.code == "namespace_forbidden"

    # A token of both namespaces, naming acme, reaches it.
    threading.Timer(0.2, lambda: both.send(eid, "approval.decision", "approve")).start()
    e = acme.result(eid, wait=20)
    assert e.status == "completed" and e.namespace == "acme"
    assert e.result == {"request": {"id": "r-1"}, "outcome": "granted"}
    # run: start and await in one call, in acme.
    assert both.run("approval", {"id": "r-2"}, 0, id="acme-fast", wait=20)["outcome"] == "escalated"
    listed = {x.id: x.namespace for x in acme.list()}
    assert listed == {"acme-approval": "acme", "acme-fast": "acme"}
    assert list(Client(ns_server.url, token=BOTH, namespace="globex").list()) == []


def test_a_worker_handles_only_its_namespaces_tasks(ns_server):
    seen = {"acme": [], "globex": []}
    workers = {}
    for ns, token in [("acme", ACME), ("globex", GLOBEX)]:
        w = Worker(ns_server.url, token, concurrency=4, lease=5.0, poll_wait=0.5)

        def handler(task: Task, ns=ns):
            seen[ns].append((task.execution_id, task.key))
            return "shipped" if task.key == "shipping.ship" else {"ok": True}

        for pattern in ["inventory.*", "payment.*", "shipping.*"]:
            w.effect(pattern)(handler)
        workers[ns] = w
    threads = [threading.Thread(target=w.run, kwargs={"install_signals": False}) for w in workers.values()]
    for t in threads:
        t.start()
    try:
        acme = Client(ns_server.url, token=ACME)
        for i in range(3):
            assert acme.run("order_saga", {"id": f"o-{i}"}, id=f"acme-order-{i}", wait=30) == {
                "order": f"o-{i}", "status": "shipped", "steps": ["reserve", "charge", "ship"],
            }
    finally:
        for w in workers.values():
            w.stop()
        for t in threads:
            t.join(30)
    assert sorted(seen["acme"]) == sorted(
        (f"acme-order-{i}", k) for i in range(3) for k in ["inventory.reserve", "payment.charge", "shipping.ship"]
    )
    assert seen["globex"] == [], "globex's worker was handed acme's tasks"
