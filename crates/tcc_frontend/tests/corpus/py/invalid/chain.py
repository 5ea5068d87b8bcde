async def run():
    return 1 < 2 < 3
