# args: [5]
from tcc_engine.primitives import program

@program
async def run(n):
    base = n * 2
    def outer(k):
        extra = 1
        def inner(j):
            return base + extra + j + k
        return inner(10)
    return [outer(1), outer(2), base]
