# args: [10]
from tcc_engine.primitives import program

@program
async def run(n):
    total = 0
    i = 0
    while True:
        i += 1
        if i > n:
            break
        if i % 3 == 0:
            continue
        total += i
    evens = []
    for k in range(0, n, 2):
        evens.append(k)
    down = []
    for k in range(n, 0, -3):
        down.append(k)
    return {"total": total, "evens": evens, "down": down}
