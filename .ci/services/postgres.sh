#!/usr/bin/env bash
# Starts the Debian PostgreSQL cluster for the TCC host's PostgreSQL tests
# and creates the test role and database: run by .ci/run (as root, after
# `apt-get install postgresql`) and by scripts/start-postgres.sh for
# developers. Idempotent. The tests use
# postgres://irkit:irkit@127.0.0.1:5432/irkit_test, or $IRKIT_TEST_POSTGRES
# when set; each test works in its own schema and drops it. Listens on
# 127.0.0.1 only.
#
# TLS (the sslmode tests): the server presents a certificate for
# localhost and 127.0.0.1 signed by a private test CA whose certificate is
# /var/lib/postgresql/irkit-tls/ca.pem (world-readable; the tests read it
# there, or from $IRKIT_TEST_POSTGRES_CA). Made once with openssl, again
# when it nears expiry; the CA key is thrown away after signing.
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
tls_dir=/var/lib/postgresql/irkit-tls
tls_changed=0
if command -v openssl >/dev/null 2>&1; then
  if ! [ -s "$tls_dir/ca.pem" ] || ! [ -s "$tls_dir/server.key" ] \
    || ! openssl x509 -checkend 2592000 -noout -in "$tls_dir/server.pem" >/dev/null 2>&1 \
    || ! openssl verify -CAfile "$tls_dir/ca.pem" "$tls_dir/server.pem" >/dev/null 2>&1; then
    tmp=$(mktemp -d)
    openssl req -x509 -new -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 3650 \
      -subj "/CN=irkit test PostgreSQL CA" -keyout "$tmp/ca.key" -out "$tmp/ca.pem" \
      -addext "basicConstraints=critical,CA:TRUE" \
      -addext "keyUsage=critical,keyCertSign,cRLSign" 2>/dev/null
    openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj "/CN=localhost" \
      -keyout "$tmp/server.key" -out "$tmp/server.csr" 2>/dev/null
    printf '%s\n' "basicConstraints=critical,CA:FALSE" "keyUsage=critical,digitalSignature" \
      "extendedKeyUsage=serverAuth" "subjectAltName=DNS:localhost,IP:127.0.0.1" >"$tmp/ext"
    openssl x509 -req -in "$tmp/server.csr" -CA "$tmp/ca.pem" -CAkey "$tmp/ca.key" \
      -CAcreateserial -days 825 -extfile "$tmp/ext" -out "$tmp/server.pem" 2>/dev/null
    install -d -m 755 -o postgres -g postgres "$tls_dir"
    install -m 644 -o postgres -g postgres "$tmp/ca.pem" "$tmp/server.pem" "$tls_dir/"
    install -m 600 -o postgres -g postgres "$tmp/server.key" "$tls_dir/"
    rm -rf "$tmp"
    tls_changed=1
  fi
  tls_conf="/etc/postgresql/$version/main/conf.d/irkit-tls.conf"
  tls_want="ssl = on
ssl_cert_file = '$tls_dir/server.pem'
ssl_key_file = '$tls_dir/server.key'"
  if [ "$(cat "$tls_conf" 2>/dev/null)" != "$tls_want" ]; then
    printf '%s\n' "$tls_want" >"$tls_conf"
    chown postgres:postgres "$tls_conf"
    tls_changed=1
  fi
else
  echo "postgres.sh: openssl is not installed: no TLS certificate (the sslmode tests will fail under IRKIT_REQUIRE_POSTGRES=1)" >&2
fi
if ! pg_ctlcluster "$version" main status >/dev/null 2>&1; then
  pg_ctlcluster "$version" main start
elif [ "$tls_changed" = 1 ]; then
  # The ssl settings take effect on reload.
  pg_ctlcluster "$version" main reload
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
# A second database whose default collation is ICU's en-US, where
# punctuation does not sort by bytes (the journal key-range tests).
as_pg psql -qAtc "SELECT 1 FROM pg_database WHERE datname = 'irkit_test_icu'" | grep -q 1 \
  || as_pg psql -qc "CREATE DATABASE irkit_test_icu OWNER irkit TEMPLATE template0 LOCALE_PROVIDER icu ICU_LOCALE 'en-US' LOCALE 'C.UTF-8'"
echo "postgres.sh: postgres://irkit:irkit@127.0.0.1:5432/irkit_test (and irkit_test_icu) ready (PostgreSQL $version)" >&2
