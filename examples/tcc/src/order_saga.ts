// Order saga: reserve stock, charge the card, ship; on a failure, undo the
// completed steps in reverse order (refund, then release).
import { effect } from "@tcc-engine/primitives";

type Order = { id: string };

export default async function run(order: Order) {
  const done: string[] = [];
  try {
    await effect("inventory.reserve");
    done.push("reserve");
    await effect("payment.charge");
    done.push("charge");
    await effect("shipping.ship");
    done.push("ship");
    return { order: order.id, status: "shipped", steps: done };
  } catch (e) {
    const undone: string[] = [];
    if (done.length >= 2) {
      await effect("payment.refund");
      undone.push("refund");
    }
    if (done.length >= 1) {
      await effect("inventory.release");
      undone.push("release");
    }
    return { order: order.id, status: "compensated", steps: done, undone: undone, error: e };
  }
}
