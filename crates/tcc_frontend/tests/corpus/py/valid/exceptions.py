# args: [0]
# cpython: no (the bound exception is the thrown value, here a string; CPython binds an Exception object)
# expect: ["try", "caught zero", "finally", "ZeroDivisionError", 0, "f", 1, "f", "f", "cleanup", "inner"]
from tcc_engine.primitives import program

def risky(x):
    if x == 0:
        raise Exception("zero")
    return 10 / x

@program
async def run(x):
    log = []
    try:
        log.append("try")
        risky(x)
        log.append("unreached")
    except Exception as e:
        log.append("caught " + e)
    finally:
        log.append("finally")
    try:
        y = 1 // x
    except Exception as e:
        log.append(e)
    for i in range(5):
        try:
            if i == 2:
                break
            log.append(i)
        finally:
            log.append("f")
    try:
        try:
            raise Exception("inner")
        finally:
            log.append("cleanup")
    except Exception as e:
        log.append(e)
    return log
