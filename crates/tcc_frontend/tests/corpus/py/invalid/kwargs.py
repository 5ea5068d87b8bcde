def f(a):
    return a

async def run():
    return f(a=1)
