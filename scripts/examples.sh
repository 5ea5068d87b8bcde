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
# TCC engine: run example programs with the local host.
$irkit tcc run examples/tcc/run/approval.json --effects examples/tcc/run/approval.effects.json --events examples/tcc/run/approval.events.json
$irkit tcc run examples/tcc/run/compute-loop.json --args '[{"t":"number","v":1000}]'
$irkit tcc run examples/tcc/run/fail-fast.json --effects examples/tcc/run/fail-fast.effects.json --restore --format json
# TCC durable host: run an example to completion on the embedded SQLite store
# (the event is sent before the wait exists and is kept until it registers).
tcc_db=$(mktemp -d)
$irkit tcc start --local examples/tcc/run/approval.json --database "$tcc_db/irkit-tcc.db" --event 'approved="ok"' --format json
rm -rf "$tcc_db"
