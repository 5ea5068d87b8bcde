async def run(x):
    try:
        return 1
    except ValueError:
        return 2
