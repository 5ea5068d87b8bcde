async def run():
    xs = []
    if []:
        return 1
    return 0
