# args: [[4, 8, 15, 16, 23, 42]]
from tcc_engine.primitives import program

def find(xs, target):
    i = 0
    while i < len(xs):
        if xs[i] == target:
            return i
        i = i + 1
    return -1

@program
async def run(xs):
    return [find(xs, 15), find(xs, 99), xs[-2], len(xs)]
