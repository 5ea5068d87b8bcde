#!/usr/bin/env bash
# Peak memory of `irkit tcc serve` per request body (issue 42, F3), on
# loopback and a scratch SQLite file: starts a server, registers a small
# program, then sends each body below to a fresh server and prints the
# server's peak RSS growth (VmHWM after minus before) against the body's
# size. Bodies: start requests whose args hold many small values (refused
# with 413 past tcc_host::values::MAX_VALUES, before any tree is built),
# the same at the cap, an unknown program with large args (resolved
# first), a few large strings, and an event payload at the cap.
#
# Usage: bash scripts/tcc-rss.sh   (builds irkit first)
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release -q -p irkit
irkit=target/release/irkit
dir=$(mktemp -d)
trap 'kill $pid 2>/dev/null || true; rm -rf "$dir"' EXIT
cat > "$dir/p.py" <<'PY'
def run(a):
    return 1
PY
"$irkit" tcc compile "$dir/p.py" -o "$dir/p.json"
python3 - "$dir" <<'PY'
import json, sys
d = sys.argv[1]
def w(name, obj):
    with open(f"{d}/{name}", "w") as f:
        json.dump(obj, f, separators=(",", ":"))
w("zeros-8m.json", {"program": "p", "args": [[0] * 4_200_000]})
w("zeros-cap.json", {"program": "p", "args": [[0] * 99_990]})
w("unknown-cap.json", {"program": "nope", "args": [[0] * 99_990]})
w("strings-8m.json", {"program": "p", "args": [["x" * (2 << 20) for _ in range(4)]]})
w("payload-cap.json", {"name": "ev", "payload": [[1.5, "ab"]] * 33_000})
PY
measure() {
  local body=$1 path=$2
  local port=$((20000 + RANDOM % 20000))
  rm -f "$dir/db"*
  "$irkit" tcc serve --listen 127.0.0.1:$port --database "$dir/db" --max-body $((9 << 20)) \
    > "$dir/serve.log" 2>&1 &
  pid=$!
  for _ in $(seq 100); do curl -s "http://127.0.0.1:$port/v1/health" >/dev/null && break; sleep 0.1; done
  curl -s -o /dev/null -H 'Content-Type: application/json' --data-binary @"$dir/p.json" \
    "http://127.0.0.1:$port/v1/artifacts?name=p"
  local target=$path
  if [ "$path" = events ]; then
    id=$(curl -s -H 'Content-Type: application/json' -d '{"program":"p"}' "http://127.0.0.1:$port/v1/executions" | python3 -c 'import json,sys; print(json.load(sys.stdin)["id"])')
    target=/v1/executions/$id/events
  fi
  sleep 0.3
  local before after size code
  before=$(awk '/VmHWM/ {print $2}' /proc/$pid/status)
  code=$(curl -s -o /dev/null -w '%{http_code}' -H 'Content-Type: application/json' \
    --data-binary @"$dir/$body" "http://127.0.0.1:$port$target")
  sleep 0.3
  after=$(awk '/VmHWM/ {print $2}' /proc/$pid/status)
  size=$(stat -c %s "$dir/$body")
  kill $pid; wait $pid 2>/dev/null || true
  python3 -c "import sys; b,a,s=map(int,sys.argv[1:4]); d=max(a-b,0)*1024; print(f'{sys.argv[4]:18} HTTP {sys.argv[5]}  body {s/1e6:6.2f} MB  peak RSS +{d/1e6:7.1f} MB  ({d/s:5.1f}x body)')" \
    "$before" "$after" "$size" "$body" "$code"
}
measure zeros-8m.json /v1/executions
measure zeros-cap.json /v1/executions
measure unknown-cap.json /v1/executions
measure strings-8m.json /v1/executions
measure payload-cap.json events
