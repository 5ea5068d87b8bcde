# args: [4]
from tcc_engine.primitives import program

RATE = 3
LABEL = "total"
OFFSET = -1.5

def price(n):
    return n * RATE + OFFSET

@program
async def run(n):
    return {"label": LABEL, "value": price(n), "rate": RATE}
