"""The end-to-end test's worker process: the order saga's effects, each
run appended to a log (one line per handler run: its idempotency key).
Usage: e2e_worker.py URL SRC_DIR LOG"""

import os
import sys

sys.path.insert(0, sys.argv[2])
from irkit_tcc import Task, Worker  # noqa: E402

log = open(sys.argv[3], "a", buffering=1)
w = Worker(sys.argv[1], concurrency=8, lease=2.0, poll_wait=2.0)


def record(task: Task) -> None:
    log.write(task.idempotency_key + "\n")
    log.flush()
    os.fsync(log.fileno())


@w.effect("inventory.*")
def inventory(task: Task):
    record(task)
    return {"ok": True}


@w.effect("payment.*")
def payment(task: Task):
    record(task)
    # Every tenth order's card is declined: the saga compensates.
    if task.key == "payment.charge" and task.execution_id.endswith("7"):
        raise RuntimeError("card declined")
    return {"ok": True}


@w.effect("shipping.*")
def shipping(task: Task):
    record(task)
    return {"ok": True}


print("ready", flush=True)
w.run()
