#!/usr/bin/env bash
# Start-up and small-input figures of irkit against naga-cli, in one alternated run
# (issue 41; docs/startup.md). Not part of the test command.
#
#   bash scripts/bench-startup.sh [ROUNDS]      # default 21 rounds
#   BENCH_LARGE_BYTES=100000,1000000,12000000 bash scripts/bench-startup.sh   # generated sizes
#   BENCH_IRKIT_BEFORE=/path/to/old/irkit bash scripts/bench-startup.sh        # also old vs new
#   bash scripts/bench-startup.sh --glslang /path/to/old/irkit [ROUNDS]
#       # VPL -> GLSL 4.20 of the generated 12.6 MB module against glslangValidator on its
#       # output, this build and the old one alternated (issue 41's ratio; docs/vpl/decisions.md)
#
# Builds irkit (release), installs naga-cli 30 (the naga irkit links) into target/naga-cli once,
# then runs scripts/bench_startup.py. Needs python3 and /usr/bin/time (Debian package `time`).
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "${1:-}" = "--glslang" ]; then
  cargo build --release -p irkit
  exec python3 scripts/bench_startup.py --glslang target/release/irkit "${2:?the earlier irkit}" "${3:-5}"
fi
rounds="${1:-21}"
cargo build --release -p irkit
naga="target/naga-cli/bin/naga"
if [ ! -x "$naga" ]; then
  # A naga-cli 30 already on PATH will do; otherwise install one into target/.
  if command -v naga >/dev/null && naga --version | grep -q '^30\.'; then
    naga="$(command -v naga)"
  else
    cargo install naga-cli --version '~30.0' --root target/naga-cli
  fi
fi
"$naga" --version
python3 scripts/bench_startup.py target/release/irkit "$naga" "$rounds"
