async def run():
    return 1 +
