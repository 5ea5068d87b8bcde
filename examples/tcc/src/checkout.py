# Checkout: charge an amount computed from the order, then reserve each item
# with its own effect (one journal entry per item: the key is computed from
# the item), and remember the order in the host's key-value store.
from tcc_engine.primitives import effect, program


@program
async def run(order):
    total = 0
    for line in order["lines"]:
        total = total + line["price"] * line["qty"]
    charge = await effect(
        f"payment.charge.{order['id']}",
        input={"customer": order["customer"], "amount": total},
    )
    reserved = []
    for line in order["lines"]:
        r = await effect(f"inventory.reserve.{line['sku']}", input={"sku": line["sku"], "qty": line["qty"]})
        reserved.append(r["sku"])
    remembered = await effect(
        "kv.last_order", input={"op": "set", "key": order["customer"], "value": order["id"]}
    )
    return {"order": order["id"], "charged": charge["amount"], "reserved": reserved, "remembered": remembered}
