#!/usr/bin/env bash
# Starts the Debian PostgreSQL cluster for the TCC host's PostgreSQL tests
# and creates the test role and database: run by .ci/run (as root, after
# `apt-get install postgresql`) and by scripts/start-postgres.sh for
# developers. Idempotent. The tests use
# postgres://irkit:irkit@127.0.0.1:5432/irkit_test, or $IRKIT_TEST_POSTGRES
# when set; each test works in its own schema and drops it. Listens on
# 127.0.0.1 only.
set -euo pipefail
if ! command -v pg_ctlcluster >/dev/null 2>&1; then
  echo "postgres.sh: PostgreSQL is not installed (apt-get install postgresql); skipping" >&2
  exit 0
fi
# The newest installed server version (Debian 12: 15, Debian 13: 17).
version=$(ls /usr/lib/postgresql 2>/dev/null | sort -V | tail -n 1)
if [ -z "$version" ]; then
  echo "postgres.sh: no PostgreSQL server under /usr/lib/postgresql" >&2
  exit 1
fi
if [ ! -d "/etc/postgresql/$version/main" ]; then
  pg_createcluster "$version" main >/dev/null
fi
conf="/etc/postgresql/$version/main/postgresql.conf"
grep -q "^listen_addresses = '127.0.0.1'" "$conf" || echo "listen_addresses = '127.0.0.1'" >> "$conf"
grep -q "^port = 5432" "$conf" || echo "port = 5432" >> "$conf"
if ! pg_ctlcluster "$version" main status >/dev/null 2>&1; then
  pg_ctlcluster "$version" main start
fi
as_pg() { runuser -u postgres -- "$@"; }
ready=0
for _ in $(seq 1 100); do
  if as_pg psql -qAtc "SELECT 1" >/dev/null 2>&1; then ready=1; break; fi
  sleep 0.2
done
if [ "$ready" != 1 ]; then
  echo "postgres.sh: PostgreSQL $version did not come up" >&2
  exit 1
fi
as_pg psql -qAtc "SELECT 1 FROM pg_roles WHERE rolname = 'irkit'" | grep -q 1 \
  || as_pg psql -qc "CREATE ROLE irkit LOGIN PASSWORD 'irkit'"
as_pg psql -qAtc "SELECT 1 FROM pg_database WHERE datname = 'irkit_test'" | grep -q 1 \
  || as_pg psql -qc "CREATE DATABASE irkit_test OWNER irkit"
echo "postgres.sh: postgres://irkit:irkit@127.0.0.1:5432/irkit_test ready (PostgreSQL $version)" >&2
