# args: []
def f(log):
    try:
        log.append("body")
        return "from try"
    finally:
        log.append("finally")

async def run():
    log = []
    r = f(log)
    return [r, log]
