from tcc_engine.primitives import effect

async def run(items):
    total = 0
    for item in items:
        total = total + await effect("charge", input=item)
    return total
