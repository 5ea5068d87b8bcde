# args: [2]
# A catch-less `finally` runs on the normal path.
from tcc_engine.primitives import program

@program
async def run(x):
    log = []
    try:
        log.append(x * 10)
    finally:
        log.append("cleanup")
    return log
