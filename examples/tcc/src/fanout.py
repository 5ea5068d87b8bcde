# Fan-out: ask three carriers for a quote at once, then pick the cheapest
# of the carriers that answered with a price (None: no quote).
from tcc_engine.primitives import effect, gather, program


def cheapest(quotes, names):
    best = None
    best_name = None
    for i in range(len(quotes)):
        q = quotes[i]
        if q is not None and (best is None or q < best):
            best = q
            best_name = names[i]
    return {"carrier": best_name, "price": best}


@program
async def run():
    quotes = await gather(effect("quote.ups", quote_ups), effect("quote.dhl", quote_dhl), effect("quote.fedex", quote_fedex))
    return cheapest(quotes, ["ups", "dhl", "fedex"])
