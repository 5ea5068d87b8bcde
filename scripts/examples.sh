#!/usr/bin/env bash
# Runs irkit's main job on the built-in examples of every system.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release -q -p irkit
irkit=target/release/irkit
# rvnlib: verify, inspect and link the .rvnlib examples; every refused file must fail.
rvn=examples/rvnlib
"$irkit" rvn verify "$rvn"/*.rvnlib
"$irkit" rvn inspect "$rvn/core.rvnlib" | cmp - "$rvn/core.json"
"$irkit" rvn calls "$rvn/core.rvnlib" 'Core.Shading.Everything(s: Surface, n: float3, m: float4x4, i: int): float'
"$irkit" rvn link --consumer "$rvn/app.rvnlib" "$rvn/pkg-a.rvnlib" "$rvn/pkg-b.rvnlib" -o target/app-linked.rvnlib
cmp target/app-linked.rvnlib "$rvn/app-linked.rvnlib"
for f in "$rvn"/refused/*.rvnlib "$rvn"/refused/*.bin "$rvn"/refused/*.rvnfx "$rvn"/refused/*.json; do
  if "$irkit" rvn verify "$f" 2>/dev/null; then echo "rvn verify accepted refused example $f" >&2; exit 1; fi
done
if "$irkit" rvn link "$rvn/collide-x.rvnlib" "$rvn/collide-y.rvnlib" -o target/collide.rvnlib 2>/dev/null; then
  echo "rvn link accepted a key collision" >&2; exit 1
fi
