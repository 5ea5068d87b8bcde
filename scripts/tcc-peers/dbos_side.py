"""DBOS Transact side of the peer benchmark (scripts/tcc-peers.sh): the same three-step workflow
as small3.py (`@DBOS.workflow` calling a `@DBOS.step` three times), started and awaited by client
threads of this process (`DBOS.start_workflow` + `handle.get_result()`, DBOS's in-process
pattern: no HTTP hop). Prints one JSON object.

  dbos_side.py --db URL --schema NAME --n 2000 --clients 20 --warmup 20 --limit 300"""

import argparse
import json
import os
import sys
import traceback

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import load  # noqa: E402

from dbos import DBOS, DBOSConfig  # noqa: E402


@DBOS.step()
def step(n):
    return 1


@DBOS.workflow()
def small3(n):
    step(n)
    step(n)
    step(n)
    return n


def run_one(i):
    return DBOS.start_workflow(small3, i).get_result()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--db", required=True)
    ap.add_argument("--schema", required=True)
    ap.add_argument("--n", type=int, default=2000)
    ap.add_argument("--clients", type=int, default=20)
    ap.add_argument("--warmup", type=int, default=20)
    ap.add_argument("--limit", type=float, default=300.0)
    a = ap.parse_args()
    config: DBOSConfig = {"name": "tcc-peers", "system_database_url": a.db,
                          "dbos_system_schema": a.schema, "log_level": "WARNING"}
    DBOS(config=config)
    DBOS.launch()
    code = 0
    try:
        for i in range(a.warmup):
            assert run_one(i) == i
        out = load.drive(run_one, a.n, a.clients, a.limit, {"dbos+clients": os.getpid()}, postgres=True)
        print(json.dumps(out), flush=True)
    except Exception:  # noqa: BLE001 - printed; the exit status says it failed
        traceback.print_exc()
        code = 1
    finally:
        DBOS.destroy(destroy_registry=False)
        # DBOS leaves background threads running: end the process here.
        os._exit(code)


if __name__ == "__main__":
    main()
