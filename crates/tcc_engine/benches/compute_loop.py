"""The compute-loop example in CPython, for the side-by-side benchmark.

    python3 crates/tcc_engine/benches/compute_loop.py
        times the loop in this CPython (best of 5, wall clock).

    python3 crates/tcc_engine/benches/compute_loop.py target/release/irkit [N] [ROUNDS]
        alternates `irkit tcc run examples/tcc/run/compute-loop.json` and this
        loop in a fresh CPython process, N iterations each (default 5e6), and
        reports the CPU user time of each child and their ratio per round and
        overall. CPU time of alternating runs holds up on a shared, loaded
        machine far better than wall-clock time.
"""
import os
import resource
import subprocess
import sys
import time


def run(n):
    s = 0
    i = 0
    while i < n:
        s = s + (i * i) % 7
        i = i + 1
    return s


def child_user_time(cmd):
    """CPU user seconds of one child process (its output is checked)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_utime
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    return resource.getrusage(resource.RUSAGE_CHILDREN).ru_utime - before, out


def side_by_side(irkit, n, rounds):
    here = os.path.dirname(os.path.abspath(__file__))
    artifact = os.path.join(here, "..", "..", "..", "examples", "tcc", "run", "compute-loop.json")
    engine = [irkit, "tcc", "run", artifact, "--args", '[{"t":"number","v":%d}]' % n,
              "--format", "json"]
    python = [sys.executable, os.path.abspath(__file__), "--child", str(n)]
    totals = [0.0, 0.0]
    for r in range(rounds):
        te, out_e = child_user_time(engine)
        tp, out_p = child_user_time(python)
        # Both compute the same sum.
        if f'"v":{out_p.strip()}' not in out_e.replace(" ", ""):
            sys.exit(f"results differ: irkit {out_e!r}, cpython {out_p!r}")
        totals[0] += te
        totals[1] += tp
        ratio = tp / te if te > 0 else float("inf")
        print(f"round {r + 1}: irkit {te:.3f}s  cpython {tp:.3f}s  ratio {ratio:.2f}x")
    print(f"total: irkit {totals[0]:.3f}s  cpython {totals[1]:.3f}s  "
          f"cpython/irkit {totals[1] / totals[0]:.2f}x  ({n} iterations, {rounds} rounds, CPU user time)")


if __name__ == "__main__":
    if len(sys.argv) >= 3 and sys.argv[1] == "--child":
        print(run(int(sys.argv[2])))
    elif len(sys.argv) >= 2:
        n = int(float(sys.argv[2])) if len(sys.argv) >= 3 else 5_000_000
        rounds = int(sys.argv[3]) if len(sys.argv) >= 4 else 5
        side_by_side(sys.argv[1], n, rounds)
    else:
        N = 1_000_000
        best = min((lambda t0: (run(N), time.perf_counter() - t0)[1])(time.perf_counter()) for _ in range(5))
        print(f"cpython 1e6 iterations: {best * 1000:.1f} ms")
