// Payment with a durable retry and compensation: hold the stock, charge the
// card (the providers file gives `payment.*` a retry policy, so a flaky
// payment service is called again after a backoff, durably, even across a
// restart of the host), and release the stock when the charge fails for
// good or the execution is cancelled.
import { effect } from "@tcc-engine/primitives";

export default async function run(order: any) {
  await effect(`inventory.hold.${order.id}`, { input: { sku: order.sku, qty: order.qty } });
  try {
    const charge = await effect(`payment.charge.${order.id}`, {
      input: { customer: order.customer, amount: order.amount },
    });
    return { order: order.id, status: "paid", charged: charge.amount };
  } catch (e) {
    await effect(`inventory.release.${order.id}`, { input: { sku: order.sku, qty: order.qty } });
    return { order: order.id, status: "released", error: e };
  }
}
