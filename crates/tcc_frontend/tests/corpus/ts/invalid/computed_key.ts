import { effect } from "@tcc-engine/primitives";
export default async function run(k) {
  return await effect(5);
}
