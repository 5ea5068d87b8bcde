async def run():
    return 1 in [1]
