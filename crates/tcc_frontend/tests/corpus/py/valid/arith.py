# args: [7, 2]
from tcc_engine.primitives import program

@program
async def run(a, b):
    return [a + b, a - b, a * b, a / b, a // b, a % b, a ** b, -a // b, -a % b, 2 ** 0.5, True + 1]
