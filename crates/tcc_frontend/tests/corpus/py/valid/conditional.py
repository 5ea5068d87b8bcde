# args: [7, -2]
from tcc_engine.primitives import program

def sign(v):
    return "pos" if v > 0 else ("zero" if v == 0 else "neg")

@program
async def run(a, b):
    big = a if a > b else b
    both = a > 0 and b > 0
    either = a > 0 or b > 0
    return [sign(a), sign(b), sign(0), big, both, either, not both]
