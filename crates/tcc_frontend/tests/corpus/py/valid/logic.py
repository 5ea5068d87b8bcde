# args: [0, "", [], 5]
from tcc_engine.primitives import program

@program
async def run(a, b, c, d):
    return [a or b, a and d, d and "yes", b or d, not c, c or "empty", not d, a if c else d, None is None, d is not None, 1 == True]
