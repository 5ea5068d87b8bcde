from tcc_engine.primitives import effect

async def run():
    x = effect("a")
    return x
