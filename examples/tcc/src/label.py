# Child workflow `label`: price a parcel by weight and print the label.
from tcc_engine.primitives import effect, program


@program
async def run(order_id="demo", weight=1):
    await effect("label.print", print_label)
    tier = "heavy" if weight > 10 else "standard"
    return {"order": order_id, "tier": tier, "cost": 5 + weight * 2}
