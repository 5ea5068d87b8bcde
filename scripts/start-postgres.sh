#!/usr/bin/env bash
# Starts the Debian PostgreSQL 15 cluster for the (not yet built) PostgreSQL
# backend of the TCC host and creates the test role and database. Not run by
# CI until that backend and its tests exist (then: move to .ci/services/ and
# add postgresql to .ci/apt-packages). Exports nothing: the tests use the fixed URL
# postgres://irkit:irkit@127.0.0.1:5432/irkit_test, or $IRKIT_TEST_POSTGRES
# when set. Listens on 127.0.0.1 only.
set -euo pipefail
if ! command -v pg_ctlcluster >/dev/null 2>&1; then
  echo "postgres.sh: PostgreSQL is not installed; skipping" >&2
  exit 0
fi
version=15
if [ ! -d "/etc/postgresql/$version/main" ]; then
  pg_createcluster "$version" main >/dev/null
fi
conf="/etc/postgresql/$version/main/postgresql.conf"
grep -q "^listen_addresses = '127.0.0.1'" "$conf" || echo "listen_addresses = '127.0.0.1'" >> "$conf"
if ! pg_ctlcluster "$version" main status >/dev/null 2>&1; then
  pg_ctlcluster "$version" main start
fi
as_pg() { runuser -u postgres -- "$@"; }
for _ in $(seq 1 50); do
  as_pg psql -qAtc "SELECT 1" >/dev/null 2>&1 && break
  sleep 0.2
done
as_pg psql -qAtc "SELECT 1 FROM pg_roles WHERE rolname = 'irkit'" | grep -q 1 \
  || as_pg psql -qc "CREATE ROLE irkit LOGIN PASSWORD 'irkit'"
as_pg psql -qAtc "SELECT 1 FROM pg_database WHERE datname = 'irkit_test'" | grep -q 1 \
  || as_pg psql -qc "CREATE DATABASE irkit_test OWNER irkit"
echo "postgres.sh: postgres://irkit:irkit@127.0.0.1:5432/irkit_test ready" >&2
