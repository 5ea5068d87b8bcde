async def run():
    break
