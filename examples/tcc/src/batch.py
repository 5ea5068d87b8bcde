# Batch: book a label for every parcel by invoking the child workflow `label`
# once per parcel (each call in the loop is its own child execution), and wait
# for each parcel's scan event, whose name is computed from the order.
from tcc_engine.primitives import invoke, program, wait_for_event


@program
async def run(parcels):
    tiers = []
    cost = 0
    for p in parcels:
        label = await invoke("label", p["order"], p["weight"])
        tiers.append(label["tier"])
        cost = cost + label["cost"]
        await wait_for_event(f"scan.{p['order']}")
    return {"parcels": len(parcels), "tiers": tiers, "cost": cost}
