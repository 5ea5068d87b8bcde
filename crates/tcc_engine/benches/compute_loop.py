"""The compute-loop example in CPython, for the side-by-side benchmark."""
import time

def run(n):
    s = 0
    i = 0
    while i < n:
        s = s + (i * i) % 7
        i = i + 1
    return s

N = 1_000_000
best = min((lambda t0: (run(N), time.perf_counter() - t0)[1])(time.perf_counter()) for _ in range(5))
print(f"cpython 1e6 iterations: {best * 1000:.1f} ms")
