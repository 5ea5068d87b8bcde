// Child workflow `label`: price a parcel by weight and print the label.
import { effect } from "@tcc-engine/primitives";

export default async function run(orderId: string, weight: number) {
  const id = orderId === undefined ? "demo" : orderId;
  const w = weight === undefined ? 1 : weight;
  await effect("label.print");
  const tier = w > 10 ? "heavy" : "standard";
  return { order: id, tier: tier, cost: 5 + w * 2 };
}
