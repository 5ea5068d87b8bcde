#!/usr/bin/env bash
# Retention benchmark (issue 35), outside the test suite: 50 clients run
# flows (two effects each) against a host in process while retention deletes
# (and archives) 100 000 expired executions; phases with and without the
# deletion alternate in one run, and the ratio of their flows/s is printed
# (goal >= 0.9). See crates/tcc_host/examples/tcc_retention.rs.
#
# Usage: bash scripts/tcc-retention.sh [sqlite|postgres|both] [EXPIRED] [CLIENTS] [PHASE_S] [ROUNDS]
# PostgreSQL: the test database of scripts/start-postgres.sh (started here
# when PostgreSQL is installed), or $IRKIT_TEST_POSTGRES.
set -euo pipefail
cd "$(dirname "$0")/.."
which=${1:-both}
expired=${2:-100000}
clients=${3:-50}
phase=${4:-4}
rounds=${5:-3}
cargo build --release -q -p tcc_host --example tcc_retention
run() {
  timeout 1800 target/release/examples/tcc_retention --backend "$1" --expired "$expired" \
    --clients "$clients" --phase-s "$phase" --rounds "$rounds"
}
case "$which" in
  sqlite) run sqlite ;;
  postgres) bash scripts/start-postgres.sh >/dev/null; run postgres ;;
  both) run sqlite; bash scripts/start-postgres.sh >/dev/null; run postgres ;;
  *) echo "usage: $0 [sqlite|postgres|both] [EXPIRED] [CLIENTS] [PHASE_S] [ROUNDS]" >&2; exit 2 ;;
esac
