# args: [4]
# expect: 9
from tcc_engine.primitives import program

def helper(x):
    return x * 2

@program
async def run(n):
    return helper(n) + 1
