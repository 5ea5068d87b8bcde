import { effect } from "@tcc-engine/primitives";
function helper() {
  return effect("x");
}
export default async function run() {
  return helper();
}
