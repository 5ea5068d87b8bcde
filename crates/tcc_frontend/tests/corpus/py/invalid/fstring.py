async def run():
    return f"{1}"
