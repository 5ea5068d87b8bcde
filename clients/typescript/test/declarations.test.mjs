// The declarations (src/*.d.ts) and the modules agree on what is exported: every declared class,
// function and constant exists with that kind, and nothing is exported undeclared. Their types
// are checked by tsc against test_types/usage.ts (crates/irkit/tests/tcc_clients.rs).
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";

const declared = (file) => {
  const text = readFileSync(new URL(`../src/${file}`, import.meta.url), "utf8");
  return new Map([...text.matchAll(/^export (class|function|const) (\w+)/gm)].map((m) => [m[2], m[1]]));
};

for (const [module, dts] of [["../src/index.js", "index.d.ts"], ["../src/testing.js", "testing.d.ts"]]) {
  test(`${dts} declares exactly what ${module.slice(7)} exports`, async () => {
    const mod = await import(module);
    const decl = declared(dts);
    assert.ok(decl.size >= 4, `${decl.size} declarations`);
    for (const [name, kind] of decl) {
      assert.ok(name in mod, `${name} is declared but not exported`);
      if (kind === "const") assert.notEqual(typeof mod[name], "function", name);
      else assert.equal(typeof mod[name], "function", name);
      if (kind === "class") assert.ok(/^class\b/.test(Function.prototype.toString.call(mod[name])), `${name} is a class`);
    }
    assert.deepEqual(Object.keys(mod).filter((n) => !decl.has(n)), [], "exported but not declared");
  });
}
