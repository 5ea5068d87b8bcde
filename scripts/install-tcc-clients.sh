#!/usr/bin/env bash
# Installs what the TCC client packages' test suites need: a virtual environment under target/
# with pytest (clients/python has no runtime dependencies). Idempotent. Prints the interpreter's
# path. Node.js >= 20 (clients/typescript, `node --test`) comes from the system (.ci/apt-packages).
#
# crates/irkit/tests/tcc_clients.rs finds the interpreter through IRKIT_TCC_CLIENTS_PYTHON, or at
# target/tcc-clients-venv/bin/python; with IRKIT_REQUIRE_CLIENTS=1 it fails instead of skipping
# when the interpreter, pytest or Node.js >= 20 is missing.
set -euo pipefail
cd "$(dirname "$0")/.."
venv=target/tcc-clients-venv
if ! "$venv/bin/python" -c "import pytest" 2>/dev/null; then
  mkdir -p target
  python3 -m venv "$venv"
  "$venv/bin/pip" install -q --disable-pip-version-check "pytest>=7,<10"
fi
echo "$PWD/$venv/bin/python"
