# Booking saga that compensates on a failure or a cancellation: hold the
# room, charge the deposit, then wait for the guest to confirm. When the
# charge fails, or the booking is cancelled while it waits
# (`irkit tcc cancel ID`), the handler refunds and releases what was done
# and re-raises: a cancellation then ends `cancelled`, a failure `failed`.
# (`irkit tcc terminate ID` stops at once, without the handler.)
from tcc_engine.primitives import effect, wait_for_event, program


@program
async def run(booking):
    done = []
    try:
        await effect("room.hold", input={"room": booking["room"]})
        done.append("hold")
        await effect("deposit.charge", input={"amount": booking["deposit"]})
        done.append("charge")
        guest = await wait_for_event("guest.confirmed")
        return {"booking": booking["id"], "status": "confirmed", "guest": guest}
    except Exception as e:
        if len(done) >= 2:
            await effect("deposit.refund", input={"amount": booking["deposit"]})
        if len(done) >= 1:
            await effect("room.release", input={"room": booking["room"]})
        raise
