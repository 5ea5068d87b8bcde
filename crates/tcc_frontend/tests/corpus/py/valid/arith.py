# args: [7, 2]
async def run(a, b):
    return [a + b, a - b, a * b, a / b, a // b, a % b, a ** b, -a // b, -a % b, 2 ** 0.5, True + 1]
