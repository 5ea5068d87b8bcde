"""Test helper: run a workflow file against scripted effect answers and
events, with timers skipped, without a server (``irkit tcc simulate``).

>>> from irkit_tcc.testing import simulate, ok, fail
>>> run = simulate("order_saga.py", {"id": "o-1"},
...                effects={"inventory.*": ok(True),
...                         "payment.charge": [fail("card declined")],
...                         "payment.refund": ok(True)})
>>> run.status, run.result["status"]
('completed', 'compensated')

Effect answers are keyed by effect-key pattern (``*`` wildcards, first
match in order); a list is a sequence (the n-th call gets the n-th answer;
running out is an error). Events are keyed by name: a payload, or a list
of payloads for successive waits; a wait for an event with no payload left
never ends, and the run stops as ``suspended`` with the event in
``waiting_for``. Timers fire at once (counted in ``timers_skipped``).

The ``irkit`` program is ``irkit=``, else ``$IRKIT_BIN``, else ``irkit`` on
the ``PATH``."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass, field
from typing import Any, Dict, List, Mapping, Optional, Union


def ok(value: Any = None) -> Dict[str, Any]:
    """An effect answer: the effect returns ``value`` (plain JSON)."""
    return {"result": value}


def fail(message: str) -> Dict[str, Any]:
    """An effect answer: the effect fails with ``message`` (thrown into the program)."""
    return {"error": message}


@dataclass
class EffectCall:
    """One effect the workflow ran."""

    key: str
    idempotency_key: str
    input: Any
    result: Any = None
    error: Optional[str] = None


@dataclass
class Simulation:
    """How a simulated run ended."""

    #: ``completed``, ``failed``, ``cancelled`` or ``suspended`` (waiting for an event that never arrives).
    status: str
    #: The result (plain JSON); for ``failed``, the thrown value.
    result: Any
    message: Optional[str]
    effects: List[EffectCall] = field(default_factory=list)
    #: Events the suspended run waits for.
    waiting_for: List[str] = field(default_factory=list)
    timers_skipped: int = 0

    def calls(self, key: str) -> List[EffectCall]:
        """The calls of effect ``key``, in order."""
        return [e for e in self.effects if e.key == key]


class SimulationError(Exception):
    """The program or the script could not be run (the message is irkit's diagnostic)."""


def _irkit(irkit: Optional[str]) -> str:
    found = irkit or os.environ.get("IRKIT_BIN") or shutil.which("irkit")
    if not found:
        raise SimulationError("irkit not found: pass irkit=, set IRKIT_BIN or put irkit on the PATH")
    return found


def simulate(
    workflow: Union[str, os.PathLike],
    *args: Any,
    effects: Optional[Mapping[str, Any]] = None,
    events: Optional[Mapping[str, Any]] = None,
    irkit: Optional[str] = None,
    execution_id: str = "simulated",
    timeout: float = 60.0,
) -> Simulation:
    """Runs ``workflow`` (an artifact JSON, or a ``.py``/``.ts``/``.rs``
    source) with plain JSON ``args`` against the scripted ``effects`` and
    ``events``."""
    script = {"effects": dict(effects or {}), "events": dict(events or {})}
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        json.dump(script, f)
        path = f.name
    try:
        proc = subprocess.run(
            [
                _irkit(irkit),
                "tcc",
                "simulate",
                os.fspath(workflow),
                "--script",
                path,
                "--args",
                json.dumps(list(args)),
                "--execution-id",
                execution_id,
            ],
            capture_output=True,
            text=True,
            timeout=timeout,
        )
    finally:
        os.unlink(path)
    if proc.returncode != 0:
        raise SimulationError((proc.stderr or proc.stdout).strip())
    r = json.loads(proc.stdout)
    return Simulation(
        status=r["status"],
        result=r.get("result"),
        message=r.get("message"),
        effects=[
            EffectCall(
                key=e["key"],
                idempotency_key=e["idempotency_key"],
                input=e.get("input"),
                result=e.get("result"),
                error=e.get("error"),
            )
            for e in r.get("effects", [])
        ],
        waiting_for=list(r.get("waiting_for", [])),
        timers_skipped=int(r.get("timers_skipped", 0)),
    )
