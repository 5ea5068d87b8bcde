# args: [3]
from tcc_engine.primitives import program

def make_counter(start):
    count = start
    def step(by=1):
        nonlocal count
        count += by
        return count
    return step

@program
async def run(n):
    c = make_counter(n)
    c()
    c(10)
    fs = []
    for i in range(3):
        fs.append(lambda x: x * i)
    return [c(), fs[0](2), fs[2](5)]
