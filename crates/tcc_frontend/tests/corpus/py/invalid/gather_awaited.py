from tcc_engine.primitives import gather, effect

async def run():
    return await gather(await effect("a"))
