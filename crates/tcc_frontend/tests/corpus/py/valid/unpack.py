# args: [[1, 2]]
async def run(pair):
    a, b = pair
    return a * 10 + b
