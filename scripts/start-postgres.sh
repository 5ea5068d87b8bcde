#!/usr/bin/env bash
# Developers: start a local PostgreSQL for the TCC host's PostgreSQL tests
# (as root, after `apt-get install postgresql`). The same script CI runs.
# Then: IRKIT_REQUIRE_POSTGRES=1 cargo test -p tcc_host -p irkit --release
exec bash "$(dirname "$0")/../.ci/services/postgres.sh" "$@"
