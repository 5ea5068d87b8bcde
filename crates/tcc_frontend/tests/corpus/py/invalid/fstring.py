async def run(x):
    return f"{x:>3}"
