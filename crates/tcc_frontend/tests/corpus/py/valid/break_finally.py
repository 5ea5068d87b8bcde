# args: [5]
# A `break` inside `try` pops the handler and runs `finally`.
from tcc_engine.primitives import program

@program
async def run(n):
    log = []
    i = 0
    while i < n:
        i = i + 1
        try:
            if i == 3:
                break
            log.append(i)
        finally:
            log.append("f")
    try:
        raise Exception("later")
    except Exception as e:
        log.append("caught")
    return log
