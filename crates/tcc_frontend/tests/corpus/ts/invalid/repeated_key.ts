import { effect } from "@tcc-engine/primitives";
export default async function run(items: number[]) {
  let total = 0;
  for (const item of items) {
    total += await effect("charge", { input: item });
  }
  return total;
}
