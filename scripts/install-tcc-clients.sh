#!/usr/bin/env bash
# Installs what the TCC client packages' test suites need: a virtual environment under target/
# with pytest and setuptools (clients/python has no runtime dependencies), and the TypeScript compiler under
# target/tcc-clients-ts (npm; it type-checks clients/typescript's .d.ts files, which the package
# itself does not depend on). Idempotent. Prints the interpreter's path (and nothing else on
# stdout). Node.js >= 20 (clients/typescript, `node --test`) comes from the system
# (.ci/apt-packages).
#
# crates/irkit/tests/tcc_clients.rs finds the interpreter through IRKIT_TCC_CLIENTS_PYTHON, or at
# target/tcc-clients-venv/bin/python, and tsc at target/tcc-clients-ts/node_modules/typescript/
# bin/tsc; with IRKIT_REQUIRE_CLIENTS=1 it fails instead of skipping when the interpreter,
# pytest, tsc or Node.js >= 20 is missing.
set -euo pipefail
cd "$(dirname "$0")/.."
venv=target/tcc-clients-venv
# setuptools >= 70.1 builds clients/python offline (it needs no `wheel` package): the suite checks
# that the package installs from its folder.
if ! "$venv/bin/python" -c "import pytest, setuptools, sys; sys.exit(tuple(map(int, setuptools.__version__.split('.')[:2])) < (70, 1))" 2>/dev/null; then
  mkdir -p target
  [ -x "$venv/bin/python" ] || python3 -m venv "$venv"
  # `python -m pip`: a venv copied from another checkout keeps that one's path in bin/pip.
  "$venv/bin/python" -m pip install -q --disable-pip-version-check "pytest>=7,<10" "setuptools>=70.1"
fi
ts=target/tcc-clients-ts
if [ ! -f "$ts/node_modules/typescript/bin/tsc" ] && command -v npm >/dev/null 2>&1; then
  mkdir -p "$ts"
  { [ -f "$ts/package.json" ] || echo '{"private": true}' > "$ts/package.json"; }
  (cd "$ts" && npm install --silent --no-audit --no-fund typescript@5.9.3 >&2) \
    || echo "install-tcc-clients.sh: npm could not install typescript" >&2
fi
echo "$PWD/$venv/bin/python"
