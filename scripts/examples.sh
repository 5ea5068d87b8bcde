#!/usr/bin/env bash
# Runs irkit's main job on the built-in examples of every system.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release -q -p irkit
irkit=target/release/irkit
# TCC artifacts: validate, check the embedded hash, and list every example.
for f in examples/tcc/*.json; do
  "$irkit" tcc validate "$f"
  "$irkit" tcc hash --check "$f"
  "$irkit" tcc print "$f" > /dev/null
done
# VPL: verify every example, then print each one's canonical text.
"$irkit" vpl check examples/vpl/*.vpl
for f in examples/vpl/*.vpl; do
  echo "== irkit vpl fmt $f"
  "$irkit" vpl fmt "$f"
done
# VPL → GLSL 4.20 core: compile every example and every built-in program
# (NAME.vert, NAME.frag, NAME.reflect.json), then render one to a PNG when
# a headless OpenGL 4.2 core context can be made (exit status 2: none).
glsl_out=target/examples/vpl-glsl
mkdir -p "$glsl_out"
for f in examples/vpl/*.vpl; do
  echo "== irkit vpl glsl $f"
  "$irkit" vpl glsl "$f" -o "$glsl_out"
done
for p in mesh-ambient-color vertex-ambient-color texture-ambient-color texture-vertex-ambient-color; do
  echo "== irkit vpl glsl builtin:$p"
  "$irkit" vpl glsl "builtin:$p" -o "$glsl_out"
done
ls "$glsl_out"
render_status=0
"$irkit" vpl render builtin:vertex-ambient-color -o target/examples/vertex-ambient-color.png \
  --size 256x256 || render_status=$?
case "$render_status" in
  0) echo "rendered target/examples/vertex-ambient-color.png" ;;
  2) echo "no headless OpenGL 4.2 core context: render skipped" ;;
  *) exit "$render_status" ;;
esac
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

# ZLM1: assemble, validate, disassemble (exact round trip) and address each example.
zlm_out=$(mktemp -d)
for src in examples/zlm/*.zlt; do
  "$irkit" zlm asm "$src" -o "$zlm_out/$(basename "$src" .zlt).zlm"
done
"$irkit" zlm run "$zlm_out/canvas.zlm" --dep "$zlm_out/shapes.zlm" --entry Canvas.widths | grep -qx true
for src in examples/zlm/*.zlt; do
  name=$(basename "$src" .zlt)
  deps=()
  for other in "$zlm_out"/*.zlm; do
    [ "$other" = "$zlm_out/$name.zlm" ] || deps+=(--dep "$other")
  done
  "$irkit" zlm validate "$zlm_out/$name.zlm" "${deps[@]}"
  "$irkit" zlm dis "$zlm_out/$name.zlm" | diff -u "$src" -
  "$irkit" zlm address "$zlm_out/$name.zlm" >/dev/null
  "$irkit" zlm ids "$zlm_out/$name.zlm" --format json >/dev/null
done
rm -rf "$zlm_out"
# ZLM reference interpreter: run the checked examples (issue 10).
"$irkit" zlm run examples/zlm/run/loop.zlt --entry Main.sum --args 10 | grep -qx 45
"$irkit" zlm run examples/zlm/run/loop.zlt --entry Main.sum --args 10 --engine c | grep -qx 45
"$irkit" zlm run examples/zlm/run/own.zlt --entry Main.demo --drops >/dev/null
"$irkit" zlm run examples/zlm/run/own.zlt --entry Main.try_demo --args false | grep -qx 'Err(99)'
"$irkit" zlm run examples/zlm/run/bytes.zlt --entry Main.demo --args 1 3 --drops | grep -qx 'Ok(20)'
"$irkit" zlm run examples/zlm/run/control.zlt --entry Main.scan --args 10 99 | grep -qx 27
# TCC engine: run example programs with the local host.
$irkit tcc run examples/tcc/run/approval.json --effects examples/tcc/run/approval.effects.json --events examples/tcc/run/approval.events.json
$irkit tcc run examples/tcc/run/compute-loop.json --args '[{"t":"number","v":1000}]'
$irkit tcc run examples/tcc/run/fail-fast.json --effects examples/tcc/run/fail-fast.effects.json --restore --format json
# TCC durable host: run an example to completion on the embedded SQLite store
# (the event is sent before the wait exists and is kept until it registers).
tcc_db=$(mktemp -d)
$irkit tcc start --local examples/tcc/run/approval.json --database "$tcc_db/irkit-tcc.db" --event 'approved="ok"' --format json
rm -rf "$tcc_db"
