#!/usr/bin/env bash
# Installs the TCC reference package (PyPI `tcc-engine`, pinned) into a virtual environment under
# target/, for the interop and differential tests. Idempotent. Prints the interpreter's path.
#
# Tests find the interpreter through IRKIT_TCC_REFERENCE_PYTHON, or at
# target/tcc-ref-venv/bin/python; with IRKIT_REQUIRE_REFERENCE=1 they fail instead of skipping
# when it is missing.
set -euo pipefail
cd "$(dirname "$0")/.."
version=26.10.4
venv=target/tcc-ref-venv
if ! "$venv/bin/python" -c "import importlib.metadata as m, sys; sys.exit(m.version('tcc-engine') != '$version')" 2>/dev/null; then
  mkdir -p target
  python3 -m venv "$venv"
  "$venv/bin/pip" install -q --disable-pip-version-check "tcc-engine==$version"
fi
echo "$PWD/$venv/bin/python"
