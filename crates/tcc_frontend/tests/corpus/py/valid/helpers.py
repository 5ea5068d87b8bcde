# args: [4]
from tcc_engine.primitives import program

def fact(n):
    if n <= 1:
        return 1
    return n * fact(n - 1)

def describe(x, label="n"):
    return label + "=" + ("big" if x > 10 else "small")

@program
async def run(n):
    return [fact(n), describe(fact(n)), describe(1, "one"), fact is fact]
