class A:
    pass

async def run():
    return 1
