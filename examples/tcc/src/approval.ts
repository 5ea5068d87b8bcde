// Approval with a timeout: notify the approver, then race the decision
// event against a one-hour timer; escalate when the timer wins.
import { effect, waitForEvent, sleep } from "@tcc-engine/primitives";

export default async function run(request: string, timeoutMs?: number) {
  const wait = timeoutMs === undefined ? 3600000 : timeoutMs;
  await effect("approval.notify");
  const decision = await Promise.race([waitForEvent("approval.decision"), sleep(wait)]);
  if (decision === "approve") {
    await effect("request.grant");
    return { request: request, outcome: "granted" };
  }
  if (decision === "reject") {
    return { request: request, outcome: "rejected" };
  }
  await effect("approval.escalate");
  return { request: request, outcome: "escalated" };
}
