#!/usr/bin/env bash
# Load and fault test of `irkit tcc serve` (issue 25), loopback only and
# bounded in time (each run gives up after 900 s): 50 HTTP clients start
# and drive 10 000 executions (an effect, an event wait, a timer, a child
# with an effect) against one server on SQLite, then against two nodes on
# PostgreSQL while one node is SIGKILLed and restarted once. Checks that
# every execution is terminal and completed and that every effect is
# journalled exactly once; prints requests/s and p50/p99 per route.
#
# Usage: bash scripts/tcc-load.sh [sqlite|postgres|both] [EXECUTIONS] [CLIENTS]
#        bash scripts/tcc-load.sh limits [EXECUTIONS] [CLIENTS]
#        bash scripts/tcc-load.sh limits-postgres [EXECUTIONS] [CLIENTS]
#        bash scripts/tcc-load.sh schedules [SCHEDULES] [SECONDS]
# `limits` (issue 35): the SQLite run four times, alternated, without a flow
# limit and under `program:flow` and `program:worker` limits that are never
# reached (max 1000 > 50 clients): the flows/s of each, and the ratio.
# `limits-postgres`: the same A/B on two PostgreSQL nodes, without the node
# kill (TCC_LOAD_NO_KILL=1: it measures throughput, not recovery).
# TCC_LOAD_LIMITS="--limit …" replaces the limits of the limited runs (e.g.
# rate limits: "--limit program:flow=rate=1000/s --limit program:worker=rate=1000/s").
# `schedules` (issue 35): 1 000 schedules every second for 60 s on two
# PostgreSQL nodes, one SIGKILLed midway and restarted: ticks due against
# ticks started, lost and doubled (crates/tcc_host/examples/tcc_schedule_load.rs).
# IRKIT=PATH runs that irkit binary instead of building this checkout's (a
# same-run A/B: alternate two binaries, e.g. main's and a branch's).
# PostgreSQL: the test database of scripts/start-postgres.sh (started here
# when PostgreSQL is installed), or $IRKIT_TEST_POSTGRES.
set -euo pipefail
cd "$(dirname "$0")/.."
which=${1:-both}
executions=${2:-10000}
clients=${3:-50}
irkit=${IRKIT:-}
if [ -z "$irkit" ]; then
  cargo build --release -q -p irkit
  irkit=target/release/irkit
fi
cargo build --release -q -p tcc_host --example tcc_load
run() {
  timeout 1000 target/release/examples/tcc_load --irkit "$irkit" \
    --backend "$1" --executions "$executions" --clients "$clients" --deadline-s 900
}
case "$which" in
  limits|limits-postgres)
    backend=sqlite
    if [ "$which" = limits-postgres ]; then
      backend=postgres
      bash scripts/start-postgres.sh >/dev/null
    fi
    limited=${TCC_LOAD_LIMITS:-"--limit program:flow=max=1000 --limit program:worker=max=1000"}
    for round in 1 2; do
      for mode in none limited; do
        extra=""; [ "$mode" = limited ] && extra=$limited
        echo "== round $round: $mode ($backend)"
        TCC_LOAD_NO_KILL=1 TCC_LOAD_SERVE_ARGS="$extra" run "$backend" | grep -E '^executions:'
      done
    done ;;
  schedules)
    bash scripts/start-postgres.sh >/dev/null
    cargo build --release -q -p tcc_host --example tcc_schedule_load
    timeout 600 target/release/examples/tcc_schedule_load --irkit "$irkit" \
      --schedules "${2:-1000}" --seconds "${3:-60}" ;;
  sqlite) run sqlite ;;
  postgres) bash scripts/start-postgres.sh >/dev/null; run postgres ;;
  both) run sqlite; bash scripts/start-postgres.sh >/dev/null; run postgres ;;
  *) echo "usage: $0 [sqlite|postgres|both|limits|limits-postgres] [EXECUTIONS] [CLIENTS] | schedules [SCHEDULES] [SECONDS]" >&2; exit 2 ;;
esac
