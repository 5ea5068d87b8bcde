import { effect } from "@tcc-engine/primitives";
export default async function run() {
  return await Promise.all([await effect("a")]);
}
