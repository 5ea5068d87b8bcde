# args: [2]
# effects: {"reserve": "r1", "charge": {"error": "card declined"}, "release": "ok"}
# events: {"approved": true}
# expect: {"status": "compensated", "released": "ok", "reason": "card declined", "approved": true, "waits": [true, "<undefined>"]}
from tcc_engine.primitives import effect, wait_for_event, sleep, gather, race, program

@program
async def run(qty):
    ok = await wait_for_event("approved")
    res = await effect("reserve", reserve)
    try:
        await effect("charge", charge)
        return {"status": "charged"}
    except Exception as e:
        released = await effect("release", lambda: None)
        waits = await gather(wait_for_event("approved"), sleep(qty * 10))
        return {"status": "compensated", "released": released, "reason": e, "approved": ok, "waits": waits}
