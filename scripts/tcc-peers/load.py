"""The peer benchmark's load (scripts/tcc-peers.sh): N workflows started by C client threads, each
starting one workflow, awaiting its result, then the next; start-to-result latencies, workflows
per second over the timed section, and CPU seconds of the processes under test."""

from __future__ import annotations

import os
import threading
import time
from typing import Callable, Dict, List, Optional

TICK = os.sysconf("SC_CLK_TCK")


def _cpu(pid: str) -> float:
    """User + system seconds of a process, with its reaped children's."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            s = f.read()
    except OSError:
        return 0.0
    fields = s[s.rindex(")") + 2 :].split()
    return sum(int(fields[i]) for i in (11, 12, 13, 14)) / TICK


def _postgres_pids() -> List[str]:
    out = []
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                with open(f"/proc/{d}/comm") as f:
                    if f.read().strip() == "postgres":
                        out.append(d)
            except OSError:
                pass
    return out


def cpu_snapshot(pids: Dict[str, int], postgres: bool) -> Dict[str, float]:
    """CPU seconds of the named processes (and of every `postgres` process, shared with other
    users of the server) now."""
    snap = {name: _cpu(str(p)) for name, p in pids.items()}
    if postgres:
        snap["postgres"] = sum(_cpu(p) for p in _postgres_pids())
    return snap


def loadavg() -> str:
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])


def pct(sorted_xs: List[float], p: float) -> float:
    """Nearest-rank percentile of a sorted list."""
    k = min(len(sorted_xs) - 1, max(0, int(round(p / 100.0 * len(sorted_xs) + 0.5)) - 1))
    return sorted_xs[k]


def drive(run_one: Callable[[int], object], n: int, clients: int, limit_s: float,
          cpu_pids: Optional[Dict[str, int]] = None, postgres: bool = False) -> Dict[str, object]:
    """Runs workflows 0..n-1 on `clients` threads (`run_one(i)` must return i) and returns the
    figures, with the CPU seconds of the processes `cpu_pids` names (and PostgreSQL's). Stops at
    the first error or after `limit_s` seconds."""
    cpu_pids = cpu_pids or {}
    lock = threading.Lock()
    next_i = [0]
    lat: List[float] = []
    errors: List[str] = []
    deadline = time.monotonic() + limit_s

    def client() -> None:
        while True:
            with lock:
                i = next_i[0]
                if i >= n or errors or time.monotonic() > deadline:
                    return
                next_i[0] += 1
            t0 = time.perf_counter()
            try:
                got = run_one(i)
                if got != i:
                    raise AssertionError(f"workflow {i} answered {got!r}")
            except Exception as e:  # noqa: BLE001 - reported in the figures
                with lock:
                    errors.append(repr(e)[:300])
                return
            dt = time.perf_counter() - t0
            with lock:
                lat.append(dt)

    load0 = loadavg()
    cpu0 = cpu_snapshot(cpu_pids, postgres)
    t0 = time.perf_counter()
    threads = [threading.Thread(target=client, daemon=True) for _ in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=max(1.0, deadline - time.monotonic() + 5))
    elapsed = time.perf_counter() - t0
    cpu1 = cpu_snapshot(cpu_pids, postgres)
    lat.sort()
    out: Dict[str, object] = {
        "workflows": len(lat), "clients": clients, "elapsed_s": round(elapsed, 3),
        "wf_per_s": round(len(lat) / elapsed, 2),
        "cpu_s": {k: round(cpu1[k] - cpu0[k], 2) for k in cpu0},
        "load_before": load0, "load_after": loadavg(), "errors": errors[:3],
    }
    if lat:
        out.update(p50_ms=round(1000 * pct(lat, 50), 2), p99_ms=round(1000 * pct(lat, 99), 2))
    if len(lat) < n and not errors:
        out["errors"] = [f"time limit: {len(lat)} of {n} done"]
    return out
