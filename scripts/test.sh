#!/usr/bin/env bash
# The whole test suite: the README's second command, and exactly what CI runs (.ci/run adds only
# the variables that make skipped tests fail). On a fresh machine it sets up what the tests need:
#   1. the Debian packages of .ci/apt-packages (scripts/install-packages.sh tests);
#   2. the services of .ci/services/ (a local PostgreSQL on 127.0.0.1), as root or through sudo;
#      without either, the PostgreSQL tests report "skipped" unless IRKIT_TEST_POSTGRES names a
#      server;
#   3. the pinned TCC reference package, and pytest for the client packages, in virtual
#      environments under target/;
# then runs `cargo test --workspace --release` with any extra arguments passed through.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-packages.sh tests

for service in .ci/services/*.sh; do
  [ -e "$service" ] || continue
  if [ "$(id -u)" -eq 0 ]; then
    bash "$service"
  elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
    sudo bash "$service"
  else
    echo "test.sh: not root and no password-less sudo: $service not started (its tests skip)" >&2
  fi
done

IRKIT_TCC_REFERENCE_PYTHON=${IRKIT_TCC_REFERENCE_PYTHON:-$(bash scripts/install-tcc-reference.sh)}
export IRKIT_TCC_REFERENCE_PYTHON
# pytest for the TCC client packages' suites (clients/python; clients/typescript uses node --test).
IRKIT_TCC_CLIENTS_PYTHON=${IRKIT_TCC_CLIENTS_PYTHON:-$(bash scripts/install-tcc-clients.sh)}
export IRKIT_TCC_CLIENTS_PYTHON

# Property tests draw their cases from a seed fixed per commit (its hash), so a run of one commit
# is the run CI repeats: a failure reproduces with the seed printed here, and each new commit still
# explores new cases. Set PROPTEST_RNG_SEED to choose one (README.md, "Benchmarks and fuzzing").
if [ -z "${PROPTEST_RNG_SEED:-}" ]; then
  commit=$(git rev-parse --verify -q HEAD 2>/dev/null || true)
  if [ -n "$commit" ]; then PROPTEST_RNG_SEED=$((16#${commit:0:12})); else PROPTEST_RNG_SEED=0; fi
fi
export PROPTEST_RNG_SEED
echo "test.sh: PROPTEST_RNG_SEED=$PROPTEST_RNG_SEED" >&2

cargo test --workspace --release "$@"

# The README's first command belongs to the suite (a change once broke it unnoticed): the whole
# run, with the binaries `cargo test` just built. Skipped when arguments select tests.
if [ $# -eq 0 ]; then
  if IRKIT_SKIP_PACKAGES=1 IRKIT_BIN=target/release/irkit bash scripts/examples.sh \
      > target/examples.log 2>&1; then
    echo "scripts/examples.sh: ok (log: target/examples.log)"
  else
    tail -n 40 target/examples.log >&2
    echo "test.sh: scripts/examples.sh failed (log: target/examples.log)" >&2
    exit 1
  fi
fi
