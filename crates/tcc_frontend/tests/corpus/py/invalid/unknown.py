async def run():
    return y
