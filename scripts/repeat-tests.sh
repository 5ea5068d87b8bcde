#!/usr/bin/env bash
# Runs test binaries N times in a row, to catch flakes (issue 32: the browser tests).
# Usage: scripts/repeat-tests.sh N PACKAGE[:TEST]...
#   PACKAGE        every test binary of the package (lib, integration tests, doc tests excluded)
#   PACKAGE:TEST   one integration test binary (e.g. tcc_host:dashboard, irkit:tcc_dashboard)
# Builds once (release, the suite's profile), then runs each binary with its default test
# threads, from its package's directory as cargo does. A failing run's output is kept under
# target/repeat-tests/. Ends with the line "P passed, F failed" (one count per binary run);
# exits 1 if any run failed.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ $# -lt 2 ] || ! [[ "$1" =~ ^[0-9]+$ ]]; then
  echo "usage: $0 N PACKAGE[:TEST]..." >&2
  exit 2
fi
rounds=$1
shift
logs=target/repeat-tests
mkdir -p "$logs"
binaries=()   # "executable<TAB>package dir"
for spec in "$@"; do
  package=${spec%%:*}
  args=(-p "$package")
  [[ "$spec" == *:* ]] && args+=(--test "${spec#*:}")
  listing=$(cargo test --release "${args[@]}" --no-run --message-format=json 2>/dev/null) || {
    echo "repeat-tests: cannot build the tests of $spec:" >&2
    cargo test --release "${args[@]}" --no-run >&2 || true
    exit 2
  }
  while IFS= read -r line; do binaries+=("$line"); done < <(printf '%s\n' "$listing" | python3 -c '
import json, os, sys
for line in sys.stdin:
    try:
        msg = json.loads(line)
    except ValueError:
        continue
    if msg.get("reason") == "compiler-artifact" and msg.get("profile", {}).get("test") and msg.get("executable"):
        print(msg["executable"] + "\t" + os.path.dirname(msg["manifest_path"]))
')
done
if [ ${#binaries[@]} -eq 0 ]; then
  echo "repeat-tests: no test binary found for: $*" >&2
  exit 2
fi
passed=0
failed=0
start=$(date +%s)
for round in $(seq "$rounds"); do
  for entry in "${binaries[@]}"; do
    exe=${entry%%$'\t'*}
    dir=${entry#*$'\t'}
    name=$(basename "$exe")
    out="$logs/$name.round$round.log"
    if (cd "$dir" && CARGO_MANIFEST_DIR="$dir" "$exe") >"$out" 2>&1; then
      passed=$((passed + 1))
      rm -f "$out"
      echo "round $round/$rounds: ok     $name"
    else
      failed=$((failed + 1))
      echo "round $round/$rounds: FAILED $name (log: $out)"
      grep -E '^(test .* FAILED|failures:|---- )' "$out" | head -5 | sed 's/^/    /'
    fi
  done
done
echo "repeat-tests: $rounds rounds of ${#binaries[@]} binaries in $(( $(date +%s) - start )) s"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
