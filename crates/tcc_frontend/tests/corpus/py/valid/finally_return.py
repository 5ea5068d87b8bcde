# args: []
from tcc_engine.primitives import program

def f(log):
    try:
        log.append("body")
        return "from try"
    finally:
        log.append("finally")

@program
async def run():
    log = []
    r = f(log)
    return [r, log]
