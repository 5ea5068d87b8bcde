# Parent workflow: book a shipment by invoking the child workflow `label`
# and waiting for its result.
from tcc_engine.primitives import effect, invoke, program


@program
async def run(order_id, weight):
    await effect("order.pack", pack_order)
    label = await invoke("label", order_id, weight)
    return {"order": order_id, "label": label}
