import { effect } from "@tcc-engine/primitives";
export default async function run() {
  const p = effect("a");
  return await p;
}
