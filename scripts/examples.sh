#!/usr/bin/env bash
# Runs irkit's main job on the built-in examples of every system.
set -euo pipefail
# `has PATTERN` reads all of its input (where `grep -q` stops at the first match, and with
# pipefail the writer's SIGPIPE, exit 141, would fail the script now and then).
has() { grep "$@" > /dev/null; }
# The URL `irkit tcc serve --listen …:0` printed to the file $1, once it is listening (10 s at most).
listening_url() {
  for _ in $(seq 100); do grep -q '^listening on ' "$1" && break; sleep 0.1; done
  sed -n 's/^listening on //p' "$1"
}
cd "$(dirname "$0")/.."
# The Debian packages the build and the examples need (LLVM 19, Mesa, Chromium, ...), from
# the one list in .ci/apt-packages; as root or through sudo, else a message naming them.
bash scripts/install-packages.sh examples
# IRKIT_BIN: an irkit already built in target/release (scripts/test.sh passes the one its
# `cargo test` built); otherwise it is built here.
if [ -n "${IRKIT_BIN:-}" ]; then
  irkit=$IRKIT_BIN
else
  cargo build --release -q -p irkit
  irkit=target/release/irkit
fi
# TCC artifacts: validate, check the embedded hash, and list every example.
for f in examples/tcc/*.json; do
  "$irkit" tcc validate "$f"
  "$irkit" tcc hash --check "$f"
  "$irkit" tcc print "$f" > /dev/null
done
# TCC client test helper: the order saga against scripted effect answers (docs/tcc/clients.md).
echo '{"effects": {"payment.charge": {"error": "card declined"}, "*": {"result": true}}}' > target/saga-script.json
"$irkit" tcc simulate examples/tcc/src/order_saga.py --args '[{"id": "o-1"}]' --script target/saga-script.json
# VPL: verify every example, then print each one's canonical text.
"$irkit" vpl check examples/vpl/*.vpl
for f in examples/vpl/*.vpl; do
  echo "== irkit vpl canon $f"
  "$irkit" vpl canon "$f"
done
# VPL → GLSL 4.20 core: compile every example and every built-in program
# (NAME.vert, NAME.frag, NAME.reflect.json), then render one to a PNG when
# a headless OpenGL 4.2 core context can be made (exit status 2: none).
glsl_out=target/examples/vpl-glsl
mkdir -p "$glsl_out"
for f in examples/vpl/*.vpl; do
  echo "== irkit vpl glsl $f"
  "$irkit" vpl glsl "$f" -o "$glsl_out"
done
for p in mesh-ambient-color vertex-ambient-color texture-ambient-color texture-vertex-ambient-color; do
  echo "== irkit vpl glsl builtin:$p"
  "$irkit" vpl glsl "builtin:$p" -o "$glsl_out"
done
for t in glsl-420 spirv wgsl glsl-es-300 msl hlsl; do
  echo "== irkit vpl compile examples/vpl/loop_call.vpl --target $t"
  "$irkit" vpl compile examples/vpl/loop_call.vpl --target "$t" -o "$glsl_out"
done
ls "$glsl_out"
# Without --driver: OpenGL, or the CPU executor where no GL context exists.
"$irkit" vpl render builtin:vertex-ambient-color -o target/examples/vertex-ambient-color.png \
  --size 256x256
echo "rendered target/examples/vertex-ambient-color.png"
# The CPU reference executor needs no GPU stack: this render always runs.
"$irkit" vpl render builtin:texture-vertex-ambient-color --driver cpu \
  -o target/examples/texture-vertex-ambient-color.cpu.png --size 256x256
echo "rendered target/examples/texture-vertex-ambient-color.cpu.png (CPU executor)"
# Uniform values are checked against their declared type: `steps` is an int, so 2.5 is refused
# (exit 1, VPL-UNIFORM-VALUE) and nothing is drawn; uniforms not given follow one default rule,
# which render lists on standard error (docs/vpl/render.md).
"$irkit" vpl render examples/vpl/uniform_loop.vpl --driver cpu --uniform steps=8 \
  -o target/examples/uniform_loop.png --size 16x16
if "$irkit" vpl render examples/vpl/uniform_loop.vpl --driver cpu --uniform steps=2.5 \
  -o target/examples/uniform_loop.png 2>/dev/null; then
  echo "a non-integer int uniform was accepted" >&2
  exit 1
fi
# A GL draw that the driver cuts off (llvmpipe stops a loop after 65 535 iterations) is an
# error (exit 2), never an empty PNG; a driver without that limit draws it (exit 0).
lost_status=0
"$irkit" vpl render examples/vpl/uniform_loop.vpl --driver gl --uniform steps=100000000 \
  -o target/examples/uniform_loop.lost.png --size 8x8 || lost_status=$?
case "$lost_status" in
  0) echo "the driver ran 100 000 000 iterations per pixel" ;;
  2) echo "GL cut the loop off (or no GL context here): reported, exit 2" ;;
  *) exit "$lost_status" ;;
esac
render_status=0
"$irkit" vpl render builtin:texture-ambient-color --driver vulkan \
  -o target/examples/texture-ambient-color.vulkan.png --size 64x64 || render_status=$?
case "$render_status" in
  0) echo "rendered target/examples/texture-ambient-color.vulkan.png (Vulkan)" ;;
  2) echo "no Vulkan device: Vulkan render skipped" ;;
  *) exit "$render_status" ;;
esac
# The same built-in drawn with WebGL 2 in headless Chromium from the GLSL ES
# 3.00 output (exit status 2: no Chromium/chromedriver here).
webgl_status=0
"$irkit" vpl render builtin:vertex-ambient-color --driver webgl \
  -o target/examples/vertex-ambient-color.webgl.png --size 256x256 || webgl_status=$?
case "$webgl_status" in
  0) echo "rendered target/examples/vertex-ambient-color.webgl.png" ;;
  2) echo "no headless Chromium: WebGL render skipped" ;;
  *) exit "$webgl_status" ;;
esac
# VPL material graphs: compile each to canonical VPL (which must read back unchanged), to GLSL,
# and render it on GL (exit status 2: no OpenGL 4.2 core context).
for f in examples/vpl/graphs/*.json; do
  stem=$(basename "$f" .json)
  echo "== irkit vpl graph $f"
  "$irkit" vpl graph "$f" -o "target/examples/$stem.vpl"
  "$irkit" vpl canon --check "target/examples/$stem.vpl"
  "$irkit" vpl glsl "$f" -o "$glsl_out"
  inputs=()
  case "$stem" in
    textured_tint) inputs=(--attribute 2=1,0.5,0.25,1 --uniform strength=1) ;;
  esac
  graph_status=0
  "$irkit" vpl render "$f" -o "target/examples/$stem.png" --size 128x128 "${inputs[@]}" \
    || graph_status=$?
  case "$graph_status" in
    0) echo "rendered target/examples/$stem.png" ;;
    2) echo "no headless OpenGL 4.2 core context: render of $f skipped" ;;
    *) exit "$graph_status" ;;
  esac
done
# rvnlib: verify, inspect and link the .rvnlib examples; every refused file must fail.
rvn=examples/rvnlib
"$irkit" rvn verify "$rvn"/*.rvnlib
"$irkit" rvn inspect "$rvn/core.rvnlib" | cmp - "$rvn/core.json"
"$irkit" rvn pack "$rvn/core.json" -o target/core-packed.rvnlib && cmp target/core-packed.rvnlib "$rvn/core.rvnlib"
"$irkit" rvn keys "$rvn/app.rvnlib"
"$irkit" rvn calls "$rvn/core.rvnlib" 'Core.Shading.Everything(s: Surface, n: float3, m: float4x4, i: int): float'
"$irkit" rvn link --consumer "$rvn/app.rvnlib" "$rvn/pkg-a.rvnlib" "$rvn/pkg-b.rvnlib" -o target/app-linked.rvnlib
cmp target/app-linked.rvnlib "$rvn/app-linked.rvnlib"
for f in "$rvn"/refused/*.rvnlib "$rvn"/refused/*.bin "$rvn"/refused/*.rvnfx "$rvn"/refused/*.json; do
  if "$irkit" rvn verify "$f" 2>/dev/null; then echo "rvn verify accepted refused example $f" >&2; exit 1; fi
done
if "$irkit" rvn link "$rvn/collide-x.rvnlib" "$rvn/collide-y.rvnlib" -o target/collide.rvnlib 2>/dev/null; then
  echo "rvn link accepted a key collision" >&2; exit 1
fi
"$irkit" rvn verify "$rvn"/packages/*.rvnlib
"$irkit" rvn diff "$rvn/packages/brdf-v1.rvnlib" "$rvn/packages/brdf-v2.rvnlib"
if "$irkit" rvn diff "$rvn/packages/skinning-v1.rvnlib" "$rvn/packages/skinning-v2.rvnlib"; then
  echo "rvn diff called a breaking skinning version compatible" >&2; exit 1
fi

# ZLM1: assemble, validate, disassemble (exact round trip) and address each example.
zlm_out=$(mktemp -d)
for src in examples/zlm/*.zlt; do
  "$irkit" zlm asm "$src" -o "$zlm_out/$(basename "$src" .zlt).zlm"
done
"$irkit" zlm run "$zlm_out/canvas.zlm" --dep "$zlm_out/shapes.zlm" --entry Canvas.widths | has -x true
for src in examples/zlm/*.zlt; do
  name=$(basename "$src" .zlt)
  deps=()
  for other in "$zlm_out"/*.zlm; do
    [ "$other" = "$zlm_out/$name.zlm" ] || deps+=(--dep "$other")
  done
  "$irkit" zlm validate "$zlm_out/$name.zlm" "${deps[@]}"
  "$irkit" zlm dis "$zlm_out/$name.zlm" | diff -u "$src" -
  "$irkit" zlm address "$zlm_out/$name.zlm" >/dev/null
  "$irkit" zlm ids "$zlm_out/$name.zlm" --format json >/dev/null
done
"$irkit" zlm zli "$zlm_out/canvas.zlm" --dep "$zlm_out/shapes.zlm" | has '^dependency geo.shapes '
"$irkit" zlm reflect "$zlm_out/canvas.zlm" --dep "$zlm_out/shapes.zlm" --format json | has '"root":"geo.canvas"'
rm -rf "$zlm_out"
# ZLM reference interpreter: run the checked examples (issue 10).
"$irkit" zlm run examples/zlm/run/loop.zlt --entry Main.sum --args 10 | has -x 45
# The typed call boundary: a record moved in, a byte slice lent, a Result of a record out.
"$irkit" zlm run examples/zlm/run/boundary.zlt --entry Main.check \
  --json-args '[{"version": 2, "limit": 8, "tag": [5]}, [7, 1, 2]]' | head -n 1 |
  has -x '{"Ok":{"version":2,"length":3,"first":7}}'
"$irkit" zlm run examples/zlm/run/loop.zlt --entry Main.sum --args 10 --engine c | has -x 45
# The same typed call on the C engine: an Err with a payload, the lent slice handed back.
"$irkit" zlm run examples/zlm/run/boundary.zlt --entry Main.check --engine c \
  --json-args '[{"version": 2, "limit": 2, "tag": []}, [7, 1, 2]]' |
  has -x 'payload: \[7,1,2\]'
# ... and on the JIT and AOT engines, the same output.
for zlm_engine in jit aot; do
  "$irkit" zlm run examples/zlm/run/boundary.zlt --entry Main.check --engine "$zlm_engine" \
    --json-args '[{"version": 2, "limit": 2, "tag": []}, [7, 1, 2]]' | head -n 1 |
    has -x '{"Err":{"TooLong":{"length":3,"limit":2}}}'
done
"$irkit" zlm run examples/zlm/run/loop.zlt --entry Main.sum --args 10 --engine jit | has -x 45
"$irkit" zlm run examples/zlm/run/loop.zlt --entry Main.sum --args 10 --engine aot | has -x 45
zlm_aot=$(mktemp -d)
"$irkit" zlm asm examples/zlm/run/loop.zlt -o "$zlm_aot/loop.zlm"
"$irkit" zlm build "$zlm_aot/loop.zlm" -o "$zlm_aot/loop.o" 2>/dev/null
grep -q '"reproducible": false' "$zlm_aot/loop.target.json"
grep -q "\"artifact\": \"$("$irkit" zlm address "$zlm_aot/loop.zlm")\"" "$zlm_aot/loop.target.json"
# A fault in an assembled artifact points at its .zlt line (its source map).
"$irkit" zlm asm examples/zlm/run/faults.zlt -o "$zlm_aot/faults.zlm"
{ "$irkit" zlm run "$zlm_aot/faults.zlm" --entry Main.div --args 1 0 2>&1 || true; } | has 'faults.zlt:26:7 in Main.div'
# A shared library with its C interface, called from C.
"$irkit" zlm build "$zlm_aot/loop.zlm" -o "$zlm_aot/libloop.so" 2>/dev/null
printf '#include "libloop.h"\n#include <stdio.h>\nint main(void) {\n  zlm_limits l = {100000, 100, 100, 0};\n  zlm_outcome o;\n  uint64_t n = 10;\n  if (zlm_lib_call((uint64_t)zlm_lib_find("Main.sum"), &n, 1, &l, 0, 0, &o) != 0) return 1;\n  printf("%%s\\n", o.rendered);\n  return 0;\n}\n' > "$zlm_aot/main.c"
cc -std=c11 -o "$zlm_aot/main" "$zlm_aot/main.c" "$zlm_aot/libloop.so" -Wl,-rpath,"$zlm_aot"
"$zlm_aot/main" | has -x 45
rm -rf "$zlm_aot"
zlm_pkg=$(mktemp -d)
"$irkit" zlm asm examples/zlm/run/pkg_store.zlt -o "$zlm_pkg/store.zlm"
"$irkit" zlm run examples/zlm/run/pkg_main.zlt --dep "$zlm_pkg/store.zlm" --entry Main.demo --args 5 --drops | has -x 11
"$irkit" zlm run examples/zlm/run/pkg_main.zlt --dep "$zlm_pkg/store.zlm" --entry Main.demo --args 5 --drops --engine c | has -x 11
"$irkit" zlm run examples/zlm/run/pkg_main.zlt --dep "$zlm_pkg/store.zlm" --entry Main.demo --args 5 --drops --engine jit | has -x 11
"$irkit" zlm asm examples/zlm/run/pkg_main.zlt -o "$zlm_pkg/main.zlm"
"$irkit" zlm emit-c "$zlm_pkg/main.zlm" --dep "$zlm_pkg/store.zlm" -o "$zlm_pkg/c"
rm -rf "$zlm_pkg"
"$irkit" zlm run examples/zlm/run/own.zlt --entry Main.demo --drops >/dev/null
"$irkit" zlm run examples/zlm/run/own.zlt --entry Main.try_demo --args false | has -x 'Err(99)'
"$irkit" zlm run examples/zlm/run/bytes.zlt --entry Main.demo --args 1 3 --drops | has -x 'Ok(20)'
"$irkit" zlm run examples/zlm/run/own.zlt --entry Main.try_demo --args false --engine jit | has -x 'Err(99)'
"$irkit" zlm run examples/zlm/run/bytes.zlt --entry Main.demo --args 1 3 --drops --engine aot | has -x 'Ok(20)'
"$irkit" zlm run examples/zlm/run/bytes.zlt --entry Main.demo --args 1 3 --drops --engine c | has -x 'Ok(20)'
"$irkit" zlm run examples/zlm/run/control.zlt --entry Main.scan --args 10 99 | has -x 27
# TCC engine: run example programs with the local host.
$irkit tcc run examples/tcc/run/approval.json --effects examples/tcc/run/approval.effects.json --events examples/tcc/run/approval.events.json
$irkit tcc run examples/tcc/run/compute-loop.json --args '[{"t":"number","v":1000}]'
$irkit tcc run examples/tcc/run/fail-fast.json --effects examples/tcc/run/fail-fast.effects.json --restore --format json
# TCC durable host: run an example to completion on the embedded SQLite store
# (the event is sent before the wait exists and is kept until it registers).
tcc_db=$(mktemp -d)
$irkit tcc start --local examples/tcc/run/approval.json --database "$tcc_db/irkit-tcc.db" --event 'approved="ok"' --format json
rm -rf "$tcc_db"
# TCC service: serve with JSON logs and 7-day retention, a client call, the Prometheus metrics, SIGTERM (drains, exit 0).
tcc_db=$(mktemp -d)
$irkit tcc serve --listen 127.0.0.1:0 --database "$tcc_db/s.db" --retention 7d --archive-dir "$tcc_db/archive" --log-format json >"$tcc_db/out" 2>"$tcc_db/log" & tcc_pid=$!
tcc_url=$(listening_url "$tcc_db/out")
$irkit tcc ls --server "$tcc_url"
# A schedule (docs/tcc/host.md "Schedules"): every second, one execution per tick (NAME@TICK_MS).
$irkit tcc register examples/tcc/run/compute-loop.json --name loop --server "$tcc_url" > /dev/null
$irkit tcc schedule create every-second loop --every 1s --args '[10]' --server "$tcc_url"
for _ in $(seq 50); do $irkit tcc schedule ls --format json --server "$tcc_url" | has '"ticks_started":[1-9]' && break; sleep 0.1; done
$irkit tcc schedule ls --server "$tcc_url"
$irkit tcc schedule delete every-second --server "$tcc_url"
# Pause and resume (issue 35): a paused program's executions are accepted and held; resuming
# runs them. A finished execution can be deleted (the server also runs retention: --retention).
$irkit tcc pause --program loop --server "$tcc_url"
tcc_id=$($irkit tcc start loop --args '[10]' --server "$tcc_url")
$irkit tcc status "$tcc_id" --server "$tcc_url" | has " paused"
$irkit tcc resume --program loop --server "$tcc_url"
for _ in $(seq 100); do $irkit tcc status "$tcc_id" --server "$tcc_url" | has " completed" && break; sleep 0.1; done
$irkit tcc delete "$tcc_id" --server "$tcc_url"
# Flow limits (docs/tcc/host.md "Flow control"): at most 2 drives of `loop` at once across nodes, 100 starts/s.
$irkit tcc limit set program:loop --max-concurrent 2 --rate 100/s --server "$tcc_url"
# A namespace's limit holds only that namespace's executions; ls lists it as NAMESPACE/SCOPE.
$irkit tcc limit set 'route:http.*' --max-concurrent 4 --namespace acme --server "$tcc_url"
$irkit tcc limit ls --server "$tcc_url" | has '^acme/route:http\.\*'
$irkit tcc limit ls --server "$tcc_url"
$irkit tcc limit delete 'route:http.*' --namespace acme --server "$tcc_url"
$irkit tcc limit delete program:loop --server "$tcc_url"
tcc_hp=${tcc_url#http://}
exec 3<>"/dev/tcp/${tcc_hp%:*}/${tcc_hp##*:}" && printf 'GET /metrics HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n' "$tcc_hp" >&3 && grep '^tcc_executions' <&3; exec 3<&-
echo "dashboard: $tcc_url/ui"
exec 3<>"/dev/tcp/${tcc_hp%:*}/${tcc_hp##*:}" && printf 'GET /ui/api/executions HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n' "$tcc_hp" >&3 && grep -q '"executions"' <&3; exec 3<&-
# Source lines (issue 35, docs/tcc/host.md "Source lines"): register keeps the Python text beside
# the artifact; the execution view names the line the execution waits at.
$irkit tcc register examples/tcc/src/approval.py --server "$tcc_url" > /dev/null
tcc_id=$($irkit tcc start approval --args '["r-1"]' --server "$tcc_url")
for _ in $(seq 100); do $irkit tcc status "$tcc_id" --server "$tcc_url" | has " suspended" && break; sleep 0.1; done
python3 - "$tcc_url" "$tcc_id" <<'PY'
import json, sys, urllib.request
doc = json.load(urllib.request.urlopen(f"{sys.argv[1]}/ui/api/executions/{sys.argv[2]}"))
at = doc["source"]
print(f'{at["file"]}:{at["line"]}: {at["text"].strip()}')
PY
kill -TERM "$tcc_pid"; wait "$tcc_pid"
rm -rf "$tcc_db"
# Effect workers that pull (issue 34, docs/tcc/clients.md): the order saga's effects routed to
# provider kind `worker` and answered by a Python worker (clients/python), 20 orders started and
# awaited by the Python client; the worker sends the answers that finish together in one
# `POST /v1/tasks/answers`.
tcc_db=$(mktemp -d)
printf '[[route]]\npattern = "%s"\nprovider = "worker"\n\n' 'inventory.*' 'payment.*' 'shipping.*' > "$tcc_db/providers.toml"
$irkit tcc serve --listen 127.0.0.1:0 --database "$tcc_db/s.db" --providers "$tcc_db/providers.toml" >"$tcc_db/out" 2>"$tcc_db/log" & tcc_pid=$!
tcc_url=$(listening_url "$tcc_db/out")
$irkit tcc register examples/tcc/src/order_saga.py --name order_saga --server "$tcc_url" > /dev/null
PYTHONPATH=clients/python/src timeout 120 python3 - "$tcc_url" <<'PY'
import sys, threading, urllib.request
from concurrent.futures import ThreadPoolExecutor
from irkit_tcc import Client, Task, Worker

url = sys.argv[1]
worker = Worker(url, concurrency=8, poll_wait=1.0)

@worker.effect("inventory.*")
def inventory(task: Task):
    return {"ok": True}

@worker.effect("payment.*")
def payment(task: Task):
    return {"charged": True}

@worker.effect("shipping.*")
def ship(task: Task):
    return "shipped"

running = threading.Thread(target=worker.run, kwargs={"install_signals": False})
running.start()
try:
    client = Client(url)
    with ThreadPoolExecutor(8) as pool:
        results = list(pool.map(lambda i: client.run("order_saga", {"id": f"o-{i}"}, wait=30), range(20)))
finally:
    worker.stop()
    running.join(30)
assert all(r["status"] == "shipped" for r in results), results
metrics = urllib.request.urlopen(f"{url}/metrics").read().decode()
requests = sum(float(line.rsplit(" ", 1)[1]) for line in metrics.splitlines()
               if line.startswith("tcc_http_requests_total") and 'route="/v1/tasks/answers"' in line)
print(f"20 orders shipped by a Python worker: 60 effects answered in {requests:.0f} requests")
PY
kill -TERM "$tcc_pid"; wait "$tcc_pid"
rm -rf "$tcc_db"
# Namespaces (issue 35, docs/tcc/host.md "Namespaces"): tokens scoped to namespaces; globex's
# token does not see acme's execution (404, as an unknown id) and cannot name acme (403).
tcc_db=$(mktemp -d)
printf 'acme tok-acme\nglobex tok-globex\n' > "$tcc_db/tokens"
$irkit tcc serve --listen 127.0.0.1:0 --database "$tcc_db/s.db" --tokens-file "$tcc_db/tokens" >"$tcc_db/out" 2>/dev/null & tcc_pid=$!
tcc_url=$(listening_url "$tcc_db/out")
$irkit tcc register examples/tcc/run/compute-loop.json --name loop --server "$tcc_url" --token tok-acme > /dev/null
tcc_id=$($irkit tcc start loop --args '[10]' --server "$tcc_url" --token tok-acme)
$irkit tcc ls --server "$tcc_url" --token tok-acme --namespace acme | has "$tcc_id"
# The status names the namespace; GET /v1/namespaces says what a token may name (the picker of
# the dashboard shows it).
$irkit tcc status "$tcc_id" --server "$tcc_url" --token tok-acme --format json | has '"namespace":"acme"'
python3 - "$tcc_url" <<'PY' | has -x 'acme'
import json, sys, urllib.request
req = urllib.request.Request(f"{sys.argv[1]}/v1/namespaces", headers={"Authorization": "Bearer tok-acme"})
print("\n".join(json.load(urllib.request.urlopen(req))["namespaces"]))
PY
if $irkit tcc status "$tcc_id" --server "$tcc_url" --token tok-globex 2>/dev/null; then exit 1; fi
if $irkit tcc ls --server "$tcc_url" --token tok-globex --namespace acme 2>/dev/null; then exit 1; fi
kill -TERM "$tcc_pid"; wait "$tcc_pid"
rm -rf "$tcc_db"
# Traces (issue 35, docs/tcc/host.md "Traces"): spans over OTLP/HTTP JSON to a collector (here a
# small Python receiver, also the saga's webhook); the caller's trace id reaches both.
tcc_db=$(mktemp -d)
python3 - "$tcc_db" <<'PY' & otlp_pid=$!
import http.server, os, sys
d = sys.argv[1]
class Receiver(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        spans = self.path == "/v1/traces"
        line = body if spans else (self.headers.get("traceparent") or "-").encode()
        with open(os.path.join(d, "spans.jsonl" if spans else "hook.log"), "ab") as f:
            f.write(line + b"\n")
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.end_headers()
        self.wfile.write(b"{}")
    def log_message(self, *args):
        pass
server = http.server.HTTPServer(("127.0.0.1", 0), Receiver)
with open(os.path.join(d, "port.tmp"), "w") as f:
    f.write(str(server.server_port))
os.rename(os.path.join(d, "port.tmp"), os.path.join(d, "port"))
server.serve_forever()
PY
for _ in $(seq 100); do [ -s "$tcc_db/port" ] && break; sleep 0.1; done
otlp="http://127.0.0.1:$(cat "$tcc_db/port")"
printf '[[route]]\npattern = "*"\nprovider = "webhook"\nurl = "%s/hook"\nretries = 0\n' "$otlp" > "$tcc_db/p.toml"
$irkit tcc serve --listen 127.0.0.1:0 --database "$tcc_db/s.db" --providers "$tcc_db/p.toml" --otlp-endpoint "$otlp" >"$tcc_db/out" 2>/dev/null & tcc_pid=$!
tcc_url=$(listening_url "$tcc_db/out")
$irkit tcc register examples/tcc/src/order_saga.py --name saga --server "$tcc_url" > /dev/null
$irkit tcc start saga --args '[{"id":"o-1"}]' --wait --server "$tcc_url" \
  --traceparent 00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01 > /dev/null
kill -TERM "$tcc_pid"; wait "$tcc_pid"
grep -o '"name":"[^"]*"' "$tcc_db/spans.jsonl" | grep -v 'irkit-tcc' | sort | uniq -c
grep -q '"traceId":"4bf92f3577b34da6a3ce929d0e0e4736"' "$tcc_db/spans.jsonl" && grep -q '^00-4bf92f3577b34da6a3ce929d0e0e4736-' "$tcc_db/hook.log"
kill "$otlp_pid"; wait "$otlp_pid" 2>/dev/null || true
rm -rf "$tcc_db"
# TCC frontends: compile the Python and TypeScript workflows, run one of each.
for f in examples/tcc/src/*.py examples/tcc/src/*.ts; do "$irkit" tcc compile "$f" > /dev/null; done
for f in examples/tcc/src/*.rs; do "$irkit" tcc compile "$f" > /dev/null; done
$irkit tcc run examples/tcc/src/fanout.py --effects <(echo '{"quote.ups":{"t":"number","v":12},"quote.dhl":{"t":"number","v":9},"quote.fedex":{"t":"null"}}') | has '"dhl"'
$irkit tcc run examples/tcc/src/shipment.ts --args '[{"t":"string","v":"o-1"},{"t":"number","v":3}]' --effects <(echo '{"order.pack":{"t":"null"},"label.print":{"t":"null"}}') --child label=examples/tcc/src/label.ts
$irkit tcc run examples/tcc/src/shipment.rs --args '[{"t":"string","v":"o-1"},{"t":"number","v":3}]' --effects <(echo '{"order.pack":{"t":"null"},"label.print":{"t":"null"}}') --child label=examples/tcc/src/label.rs | has standard
# Workflow authors (issue 33): data into effects, computed keys, loops of effects, events and invokes; plain JSON in and out.
tcc_db=$(mktemp -d)
printf '[[route]]\npattern = "kv.*"\nprovider = "kv"\n[[route]]\npattern = "*"\nprovider = "echo"\n' > "$tcc_db/p.toml"
for ext in py ts; do
  $irkit tcc start --local examples/tcc/src/checkout.$ext --database "$tcc_db/h.db" --providers "$tcc_db/p.toml" --format json \
    --args '[{"id":"o-1","customer":"c-1","lines":[{"sku":"apple","price":2,"qty":3},{"sku":"pear","price":5,"qty":1}]}]' | has '"charged":11'
  $irkit tcc run examples/tcc/src/batch.$ext --args '[[{"order":"o-1","weight":2},{"order":"o-2","weight":12}]]' \
    --events <(echo '{"scan.o-1":true,"scan.o-2":true}') --effects <(echo '{"label.print":null}') --child label=examples/tcc/src/label.$ext | has '"cost":38'
done
$irkit tcc start --local examples/tcc/src/checkout.rs --database "$tcc_db/h.db" --providers "$tcc_db/p.toml" --format json \
  --args '[{"id":"o-2","customer":"c-2","lines":[{"sku":"fig","price":1,"qty":4}]}]' | has '"total":4'
rm -rf "$tcc_db"
# Operator resume (issue 33): the payment webhook is down (nothing listens on port 9), the
# execution fails at the charge; with the route fixed, `tcc resume` runs it again from the
# checkpoint before the charge (the stock hold keeps its journalled result).
tcc_db=$(mktemp -d)
printf 'from tcc_engine.primitives import effect, program\n\n\n@program\nasync def run(order):\n    held = await effect(f"stock.hold.{order[\x27id\x27]}", input={"qty": order["qty"]})\n    charge = await effect(f"payment.charge.{order[\x27id\x27]}", input={"amount": order["amount"]})\n    return {"held": held["qty"], "charged": charge["amount"]}\n' > "$tcc_db/shop.py"
printf '[[route]]\npattern = "payment.*"\nprovider = "webhook"\nurl = "http://127.0.0.1:9/charge"\nretries = 0\n[[route]]\npattern = "*"\nprovider = "echo"\n' > "$tcc_db/down.toml"
printf '[[route]]\npattern = "*"\nprovider = "echo"\n' > "$tcc_db/fixed.toml"
if $irkit tcc start --local "$tcc_db/shop.py" --id shop-1 --args '[{"id":"o-1","qty":2,"amount":30}]' --database "$tcc_db/h.db" --providers "$tcc_db/down.toml"; then
  echo "expected the charge to fail" >&2; exit 1
fi
$irkit tcc resume shop-1 --local --database "$tcc_db/h.db" --providers "$tcc_db/fixed.toml" | has 'shop-1 completed'
rm -rf "$tcc_db"
# Cancellation that compensates (issue 33): the booking saga holds a room, charges a deposit and
# waits for the guest; `cancel` runs its handler (refund, then release) and it ends cancelled.
tcc_db=$(mktemp -d)
printf '[[route]]\npattern = "*"\nprovider = "echo"\nlog = "%s"\n' "$tcc_db/effects.log" > "$tcc_db/p.toml"
$irkit tcc serve --listen 127.0.0.1:0 --database "$tcc_db/s.db" --providers "$tcc_db/p.toml" >"$tcc_db/out" 2>/dev/null & tcc_pid=$!
tcc_url=$(listening_url "$tcc_db/out")
$irkit tcc register examples/tcc/src/booking.py --name booking --server "$tcc_url" > /dev/null
$irkit tcc start booking --id b-1 --args '[{"id":"b-1","room":"r-9","deposit":30}]' --server "$tcc_url" > /dev/null
for _ in $(seq 100); do $irkit tcc status b-1 --server "$tcc_url" | has ' suspended ' && break; sleep 0.1; done
$irkit tcc cancel b-1 --server "$tcc_url"
{ $irkit tcc result b-1 --wait 10s --server "$tcc_url" || true; } | has 'cancelled'
grep -q '"deposit.refund"' "$tcc_db/effects.log" && grep -q '"room.release"' "$tcc_db/effects.log"
kill -TERM "$tcc_pid"; wait "$tcc_pid"
rm -rf "$tcc_db"
# Durable retries (issue 33): the payment service is down, the host calls it 3 times (durably, 50 ms
# then 100 ms apart), and the workflow compensates by releasing the stock.
tcc_db=$(mktemp -d)
printf '[[route]]\npattern = "payment.*"\nprovider = "webhook"\nurl = "http://127.0.0.1:9/"\nretries = 0\n[route.retry]\nattempts = 3\ninitial_backoff_ms = 50\n[[route]]\npattern = "*"\nprovider = "echo"\n' > "$tcc_db/p.toml"
for ext in py ts; do
  $irkit tcc start --local examples/tcc/src/payment.$ext --database "$tcc_db/h.db" --providers "$tcc_db/p.toml" --format json \
    --args '[{"id":"o-1","sku":"apple","qty":2,"customer":"c-1","amount":30}]' | has 'after 3 attempts'
done
rm -rf "$tcc_db"
