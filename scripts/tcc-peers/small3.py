# The peer benchmark's workflow (scripts/tcc-peers.sh): three sequential effects, each answered by
# the Python worker (worker.py), then the argument back. DBOS (dbos_side.py) and Restate
# (restate_service.mjs) run the same shape: three durable steps.
from tcc_engine.primitives import effect, program


@program
async def run(n):
    await effect("bench.a", input=n)
    await effect("bench.b", input=n)
    await effect("bench.c", input=n)
    return n
