# args: []
from tcc_engine.primitives import program

@program
async def run():
    return [0.30000000000000004, 0.1 + 0.2 == 0.30000000000000004, 1.5e300, 1e-7]
