import fs from "fs";
export default async function run() {
  return 1;
}
