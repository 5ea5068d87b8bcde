# Payment with a durable retry and compensation: hold the stock, charge the
# card (the providers file gives `payment.*` a retry policy, so a flaky
# payment service is called again after a backoff, durably, even across a
# restart of the host), and release the stock when the charge fails for
# good or the execution is cancelled.
from tcc_engine.primitives import effect, program


@program
async def run(order):
    await effect(f"inventory.hold.{order['id']}", input={"sku": order["sku"], "qty": order["qty"]})
    try:
        charge = await effect(
            f"payment.charge.{order['id']}",
            input={"customer": order["customer"], "amount": order["amount"]},
        )
        return {"order": order["id"], "status": "paid", "charged": charge["amount"]}
    except Exception as e:
        await effect(f"inventory.release.{order['id']}", input={"sku": order["sku"], "qty": order["qty"]})
        return {"order": order["id"], "status": "released", "error": e}
