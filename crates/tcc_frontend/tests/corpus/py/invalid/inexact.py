async def run():
    return 9007199254740993
