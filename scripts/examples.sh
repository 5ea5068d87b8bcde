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
