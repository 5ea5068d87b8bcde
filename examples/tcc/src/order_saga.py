# Order saga: reserve stock, charge the card, ship; on a failure, undo the
# completed steps in reverse order (refund, then release).
from tcc_engine.primitives import effect, program


@program
async def run(order):
    done = []
    try:
        await effect("inventory.reserve", reserve_stock)
        done.append("reserve")
        await effect("payment.charge", charge_card)
        done.append("charge")
        await effect("shipping.ship", ship_parcel)
        done.append("ship")
        return {"order": order["id"], "status": "shipped", "steps": done}
    except Exception as e:
        undone = []
        if len(done) >= 2:
            await effect("payment.refund", refund_card)
            undone.append("refund")
        if len(done) >= 1:
            await effect("inventory.release", release_stock)
            undone.append("release")
        return {"order": order["id"], "status": "compensated", "steps": done, "undone": undone, "error": e}
