from tcc_engine.primitives import effect

def helper():
    return effect("x")

async def run():
    return helper()
