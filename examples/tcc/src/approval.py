# Approval with a timeout: notify the approver, then race the decision
# event against a one-hour timer; escalate when the timer wins.
from tcc_engine.primitives import effect, wait_for_event, sleep, race, program


@program
async def run(request, timeout_ms=3600000):
    await effect("approval.notify", notify_approver)
    decision = await race(wait_for_event("approval.decision"), sleep(timeout_ms))
    if decision == "approve":
        await effect("request.grant", grant_request)
        return {"request": request, "outcome": "granted"}
    if decision == "reject":
        return {"request": request, "outcome": "rejected"}
    await effect("approval.escalate", escalate)
    return {"request": request, "outcome": "escalated"}
