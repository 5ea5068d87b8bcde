// args: [2]
// effects: {"reserve": "r1", "charge": {"error": "card declined"}, "release": "ok"}
// events: {"approved": true}
// expect: {"status": "compensated", "released": "ok", "reason": "card declined", "approved": true, "waits": [true, "<undefined>"]}
import { effect, waitForEvent, sleep } from "@tcc-engine/primitives";

export default async function run(qty) {
  const ok = await waitForEvent("approved");
  const res = await effect("reserve", reserveStock);
  try {
    await effect("charge", () => null);
    return { status: "charged" };
  } catch (e) {
    const released = await effect("release");
    const waits = await Promise.all([waitForEvent("approved"), sleep(qty * 10)]);
    return { status: "compensated", released: released, reason: e, approved: ok, waits: waits };
  }
}
