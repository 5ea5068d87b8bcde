"""The test helper: workflows run against scripted answers, no server."""

from __future__ import annotations

import pytest

from conftest import EXAMPLES
from irkit_tcc.testing import SimulationError, fail, ok, simulate

SAGA = EXAMPLES / "order_saga.py"
APPROVAL = EXAMPLES / "approval.py"


def test_the_saga_ships_when_every_effect_succeeds(irkit):
    run = simulate(SAGA, {"id": "o-1"}, effects={"*": ok(True)}, irkit=irkit)
    assert run.status == "completed"
    assert run.result == {"order": "o-1", "status": "shipped", "steps": ["reserve", "charge", "ship"]}
    assert [e.key for e in run.effects] == ["inventory.reserve", "payment.charge", "shipping.ship"]
    assert run.effects[0].idempotency_key == "simulated:inventory.reserve"


def test_a_failure_is_compensated(irkit):
    run = simulate(
        SAGA, {"id": "o-2"},
        effects={"shipping.ship": fail("no courier"), "*": ok(True)},
        irkit=irkit,
    )
    assert run.result["status"] == "compensated"
    assert run.result["undone"] == ["refund", "release"]
    assert run.calls("shipping.ship")[0].error == "no courier"


def test_answers_come_in_sequence_per_key_and_run_out(irkit):
    run = simulate(SAGA, {"id": "o-3"}, effects={"payment.charge": [fail("declined")], "*": ok(None)}, irkit=irkit)
    assert run.result["status"] == "compensated" and run.result["undone"] == ["release"]
    with pytest.raises(SimulationError, match="payment.charge"):
        simulate(SAGA, {"id": "o-4"}, effects={"payment.charge": [], "*": ok(None)}, irkit=irkit)


def test_events_that_never_arrive_and_timers_skipped(irkit):
    approved = simulate(APPROVAL, "r-1", effects={"*": ok(None)}, events={"approval.decision": "approve"}, irkit=irkit)
    assert approved.result == {"request": "r-1", "outcome": "granted"}
    # No decision: the one-hour timer fires at once and the request escalates.
    escalated = simulate(APPROVAL, "r-2", effects={"*": ok(None)}, irkit=irkit)
    assert escalated.result["outcome"] == "escalated" and escalated.timers_skipped == 1


def test_a_wait_without_payload_stays_suspended(irkit, tmp_path):
    wf = tmp_path / "wait.py"
    wf.write_text(
        "from tcc_engine.primitives import wait_for_event, program\n\n"
        "@program\nasync def run():\n    first = await wait_for_event('go')\n"
        "    second = await wait_for_event('go')\n    return [first, second]\n"
    )
    run = simulate(wf, events={"go": [1]}, irkit=irkit)
    assert run.status == "suspended" and run.waiting_for == ["go"]
    run = simulate(wf, events={"go": [1, 2]}, irkit=irkit)
    assert run.result == [1, 2]
