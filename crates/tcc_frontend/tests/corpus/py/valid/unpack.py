# args: [[1, 2]]
from tcc_engine.primitives import program

@program
async def run(pair):
    a, b = pair
    return a * 10 + b
