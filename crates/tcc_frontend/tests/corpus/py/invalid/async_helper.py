from tcc_engine.primitives import effect, program

async def helper():
    return 1

@program
async def run():
    return await effect("k")
