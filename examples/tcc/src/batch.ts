// Batch: book a label for every parcel by invoking the child workflow `label`
// once per parcel (each call in the loop is its own child execution), and wait
// for each parcel's scan event, whose name is computed from the order.
import { invoke, waitForEvent } from "@tcc-engine/primitives";

export default async function run(parcels: { order: string; weight: number }[]) {
  const tiers: string[] = [];
  let cost = 0;
  for (const p of parcels) {
    const label = await invoke("label", p.order, p.weight);
    tiers.push(label.tier);
    cost += label.cost;
    await waitForEvent(`scan.${p.order}`);
  }
  return { parcels: parcels.length, tiers, cost };
}
