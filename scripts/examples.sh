#!/usr/bin/env bash
# Runs irkit's main job on the built-in examples of every system.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release -q -p irkit
irkit=target/release/irkit

# ZLM1: assemble, validate, disassemble (exact round trip) and address each example.
zlm_out=$(mktemp -d)
for src in examples/zlm/*.zlt; do
  "$irkit" zlm asm "$src" -o "$zlm_out/$(basename "$src" .zlt).zlm"
done
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
"$irkit" zlm run examples/zlm/run/own.zlt --entry Main.demo --drops >/dev/null
"$irkit" zlm run examples/zlm/run/own.zlt --entry Main.try_demo --args false | grep -qx 'Err(99)'
