# args: [6]
from tcc_engine.primitives import program

@program
async def run(n):
    i = 0
    total = 0
    odd = []
    while i < n:
        i = i + 1
        if i % 2 == 0:
            continue
        total = total + i
        odd.append(i)
    return {"total": total, "odd": odd, "count": len(odd)}
