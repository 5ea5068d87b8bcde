// Checkout: charge an amount computed from the order, then reserve each item
// with its own effect (one journal entry per item: the key is computed from
// the item), and remember the order in the host's key-value store.
import { effect } from "@tcc-engine/primitives";

type Line = { sku: string; price: number; qty: number };

export default async function run(order: { id: string; customer: string; lines: Line[] }) {
  let total = 0;
  for (const l of order.lines) {
    total += l.price * l.qty;
  }
  const charge = await effect(`payment.charge.${order.id}`, {
    input: { customer: order.customer, amount: total },
  });
  const reserved: string[] = [];
  for (const line of order.lines) {
    const r = await effect(`inventory.reserve.${line.sku}`, { input: { sku: line.sku, qty: line.qty } });
    reserved.push(r.sku);
  }
  const remembered = await effect("kv.last_order", {
    input: { op: "set", key: order.customer, value: order.id },
  });
  return { order: order.id, charged: charge.amount, reserved, remembered };
}
