"""Client against a real server: start (idempotent), result (long poll),
send, cancel, status, list."""

from __future__ import annotations

import threading
import time

import pytest

from irkit_tcc import ApiError, Client, ExecutionFailed


def test_start_is_idempotent_and_result_waits_for_the_event(server):
    c = Client(server.url)
    eid = c.start("approval", {"id": "r-1"}, id="approval-1")
    assert eid == "approval-1"
    assert c.start("approval", {"id": "r-1"}, id="approval-1") == "approval-1"
    assert c.status(eid).status in ("runnable", "suspended")

    # Not ended: the status at the deadline, after waiting.
    t = time.monotonic()
    e = c.result(eid, wait=0.3)
    assert not e.ended and e.status == "suspended"
    assert time.monotonic() - t >= 0.28

    # Ended: answered as soon as the event is in.
    threading.Timer(0.3, lambda: Client(server.url).send(eid, "approval.decision", "reject")).start()
    t = time.monotonic()
    e = c.result(eid, wait=20)
    assert time.monotonic() - t < 5
    assert e.status == "completed"
    assert e.result == {"request": {"id": "r-1"}, "outcome": "rejected"}
    assert e.namespace == "default"


def test_cancel_list_and_errors(server):
    c = Client(server.url)
    ids = [c.start("approval", {"id": f"r-{i}"}) for i in range(3)]
    c.cancel(ids[0])
    e = c.result(ids[0], wait=20)
    assert e.status == "cancelled"
    with pytest.raises(ExecutionFailed):
        c.run("approval", {"id": "x"}, id=ids[0])
    listed = [e.id for e in c.list(program="approval", limit=2)]
    assert listed == ids
    assert [e.id for e in c.list(status="cancelled")] == [ids[0]]
    with pytest.raises(ApiError) as err:
        c.status("no-such-execution")
    assert err.value.status == 404 and err.value.code == "not_found"
    with pytest.raises(ApiError) as err:
        c.start("no-such-program")
    assert err.value.status == 404


def test_a_token_is_sent(tmp_path):
    from conftest import Server

    s = Server(tmp_path, ["--token", "s3cret"])
    try:
        with pytest.raises(ApiError) as err:
            list(Client(s.url).list())
        assert err.value.status == 401
        assert list(Client(s.url, token="s3cret").list()) == []
    finally:
        s.stop()


def test_a_namespace_is_sent(tmp_path):
    from conftest import Server

    tokens = tmp_path / "tokens"
    tokens.write_text("acme,globex s3cret\n")
    s = Server(tmp_path, ["--tokens-file", str(tokens)])
    try:
        with pytest.raises(ApiError) as err:
            list(Client(s.url, token="s3cret").list())
        assert err.value.status == 400 and err.value.code == "namespace_required"
        assert list(Client(s.url, token="s3cret", namespace="acme").list()) == []
        with pytest.raises(ApiError) as err:
            list(Client(s.url, token="s3cret", namespace="initech").list())
        assert err.value.status == 403 and err.value.code == "namespace_forbidden"
    finally:
        s.stop()
