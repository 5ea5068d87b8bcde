# args: [5, 2]
# cpython: no (the bound exception is the assertion message string)
# expect: [[true, false, true, true, true, "bad bounds"], 3, 3]
from tcc_engine.primitives import program

def clamp(x, lo, hi):
    assert lo <= hi, "bad bounds"
    return lo if x < lo else (hi if x > hi else x)

@program
async def run(a, b):
    checks = [0 < a < 10, b < a < 3, 1 <= b <= 2 <= a, a == 5 != b, a > b > 0 > -1]
    try:
        clamp(1, 5, 2)
    except Exception as e:
        checks.append(e)
    return [checks, clamp(a, 0, 3), clamp(b, 3, 9)]
