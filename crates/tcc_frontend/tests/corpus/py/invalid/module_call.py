LIMIT = compute()

async def run():
    return LIMIT
