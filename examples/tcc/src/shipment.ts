// Parent workflow: book a shipment by invoking the child workflow `label`
// and waiting for its result.
import { effect, invoke } from "@tcc-engine/primitives";

export default async function run(orderId: string, weight: number) {
  await effect("order.pack");
  const label = await invoke("label", orderId, weight);
  return { order: orderId, label: label };
}
