async def run():
    x = {"a": 1}
    return x.a
