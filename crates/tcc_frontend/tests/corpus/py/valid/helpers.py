# args: [4]
def fact(n):
    if n <= 1:
        return 1
    return n * fact(n - 1)

def describe(x, label="n"):
    return label + "=" + ("big" if x > 10 else "small")

async def run(n):
    return [fact(n), describe(fact(n)), describe(1, "one"), fact is fact]
