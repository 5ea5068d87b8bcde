from tcc_engine.primitives import effect

async def run(k):
    return await effect(5)
