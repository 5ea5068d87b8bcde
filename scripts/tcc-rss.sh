#!/usr/bin/env bash
# Peak memory of `irkit tcc serve` per request (issue 42, F3: goal ≤ 20×
# the request body), on loopback and a scratch SQLite file. Each case runs
# on a fresh server: its setup requests first (and a small request of the
# same kind, so that threads, caches and allocator arenas are warm), then
# the measured request; the figure is the server's peak RSS growth (VmHWM
# after the request and the drive it causes, minus the RSS before, the peak
# reset there through /proc/PID/clear_refs) against
# the measured request's body (for an event that resumes an execution
# started with large args, and for a GET: the body that stored the value
# it reads). The event and the GET each run on a fresh server over the
# database the earlier phase left.
#
# Cases: start requests whose args hold many small values (8 MiB and
# 2 MiB of zeros: refused with 413 past tcc_host::values::MAX_VALUES,
# before any tree is built; the same at the cap, answered and driven),
# nested objects, long strings, an unknown program (resolved first), an
# event payload at the cap (delivered: the execution completes with it as
# its result), and reading those stored executions back (GET).
#
# Usage: bash scripts/tcc-rss.sh [IRKIT_BINARY...]   (default: builds
# target/release/irkit). With several binaries (say main's, then a
# branch's), each case runs on each binary in turn, so that their figures
# come from the same run. Needs python3.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ $# -eq 0 ]; then
  cargo build --release -q -p irkit
  set -- target/release/irkit
fi
irkit=$1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cat > "$dir/p.py" <<'PY'
from tcc_engine.primitives import program, wait_for_event

@program
async def run(a):
    e = await wait_for_event("ev")
    return [a, e]
PY
"$irkit" tcc compile "$dir/p.py" -o "$dir/p.json" >/dev/null
python3 - "$dir" "$@" <<'PY'
import http.client, json, os, socket, subprocess, sys, time

d, irkits = sys.argv[1], sys.argv[2:]
irkit = irkits[0]
with open(f"{d}/p.json", "rb") as f:
    artifact = f.read()

def dump(obj):
    return json.dumps(obj, separators=(",", ":")).encode()

ZEROS_CAP = 99_990
bodies = {
    "zeros-8m": dump({"program": "p", "args": [[0] * 4_200_000]}),
    "zeros-2m": dump({"program": "p", "args": [[0] * 1_050_000]}),
    "zeros-cap": dump({"program": "p", "args": [[0] * ZEROS_CAP]}),
    "nested-cap": dump({"program": "p", "args": [[{"k": {"x": i}} for i in range(33_000)]]}),
    "strings-8m": dump({"program": "p", "args": [["x" * (2 << 20) for _ in range(4)]]}),
    "unknown-cap": dump({"program": "nope", "args": [[0] * ZEROS_CAP]}),
    "payload-cap": dump({"name": "ev", "payload": [0] * ZEROS_CAP}),
    "payload-strings-8m": dump({"name": "ev", "payload": ["y" * (2 << 20) for _ in range(4)]}),
}
small_start = dump({"program": "p", "args": [[0, 1, "x", {"k": 1}]]})
small_event = dump({"name": "ev", "payload": [1, "x"]})

def reset_peak(pid):
    # Linux: the peak (VmHWM) restarts from the current RSS, so that a
    # peak reached before (the server's start, the warm-up) hides nothing.
    with open(f"/proc/{pid}/clear_refs", "w") as f:
        f.write("5")

def hwm(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    raise RuntimeError("no VmHWM")

class Server:
    def __init__(self, keep_db=False):
        # A port nothing holds now (one that something else answered on
        # used to end the wait below at once).
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            self.port = probe.getsockname()[1]
        for name in os.listdir(d):
            if name.startswith("db") and not keep_db:
                os.remove(f"{d}/{name}")
        self.proc = subprocess.Popen(
            [irkit, "tcc", "serve", "--listen", f"127.0.0.1:{self.port}",
             "--database", f"{d}/db", "--max-body", str(9 << 20)],
            stdout=subprocess.DEVNULL, stderr=open(f"{d}/serve.log", "wb"))
        for _ in range(300):
            if self.proc.poll() is not None:
                raise RuntimeError(f"server exited with {self.proc.returncode}")
            try:
                if self.req("GET", "/v1/health")[0] == 200:
                    break
            except OSError:
                pass
            time.sleep(0.1)
        else:
            raise RuntimeError("server did not start")
        code, _ = self.req("POST", "/v1/artifacts?name=p", artifact)
        assert code in (200, 201), code

    def req(self, method, path, body=None):
        c = http.client.HTTPConnection("127.0.0.1", self.port, timeout=120)
        headers = {"Content-Type": "application/json"} if body is not None else {}
        c.request(method, path, body=body, headers=headers)
        r = c.getresponse()
        data = r.read()
        c.close()
        return r.status, data

    def start(self, body):
        code, data = self.req("POST", "/v1/executions", body)
        return code, (json.loads(data).get("id") if code == 201 else None)

    def settle(self, id, statuses):
        # Polls this execution's history (its checkpoints' statuses) until
        # it reaches one of `statuses`: the status route (or the listing)
        # would answer a completed execution's result, a read the GET
        # cases measure on their own, inside the request measured here.
        for _ in range(600):
            code, data = self.req("GET", f"/v1/executions/{id}/history")
            if code == 200:
                for entry in json.loads(data)["history"]:
                    if (entry["kind"] == "checkpoint"
                            and entry["detail"].get("status") in statuses):
                        return
                    if "failed" in statuses and "fail" in entry["kind"]:
                        return
            time.sleep(0.05)
        code, data = self.req("GET", f"/v1/executions/{id}")
        raise RuntimeError(f"{id} did not reach {statuses}: {code} {data[:300]!r}")

    def stop(self):
        self.proc.kill()
        self.proc.wait()

def report(case, body_len, code, grew):
    label = f"[{irkit}] " if len(irkits) > 1 else ""
    print(f"{label}{case:28} HTTP {code}  body {body_len / 1e6:6.2f} MB  "
          f"peak RSS +{grew / 1e6:7.1f} MB  ({grew / body_len:6.1f}x body)", flush=True)

def measure_start(case):
    s = Server()
    try:
        _, warm = s.start(small_start)
        s.settle(warm, ("suspended",))
        reset_peak(s.proc.pid)
        before = hwm(s.proc.pid)
        code, id = s.start(bodies[case])
        if id:
            s.settle(id, ("suspended", "failed"))
        time.sleep(0.3)
        report(f"start {case}", len(bodies[case]), code, hwm(s.proc.pid) - before)
    finally:
        s.stop()

def warm_cycle(s):
    # One small execution started, sent its event and read.
    _, warm = s.start(small_start)
    s.settle(warm, ("suspended",))
    s.req("POST", f"/v1/executions/{warm}/events", small_event)
    s.settle(warm, ("completed",))
    s.req("GET", f"/v1/executions/{warm}")

def measure_event_and_read(case, start_body, event_body, stored_len):
    # Each phase on a fresh server over the same database: the start, then
    # the event (resuming reads the stored continuation), then the GET.
    s = Server()
    try:
        _, id = s.start(start_body)
        s.settle(id, ("suspended",))
    finally:
        s.stop()
    s = Server(keep_db=True)
    try:
        warm_cycle(s)
        reset_peak(s.proc.pid)
        before = hwm(s.proc.pid)
        code, _ = s.req("POST", f"/v1/executions/{id}/events", event_body)
        s.settle(id, ("completed", "failed"))
        time.sleep(0.3)
        report(f"event {case}", max(len(event_body), len(start_body)), code,
               hwm(s.proc.pid) - before)
    finally:
        s.stop()
    s = Server(keep_db=True)
    try:
        warm_cycle(s)
        reset_peak(s.proc.pid)
        before = hwm(s.proc.pid)
        code, data = s.req("GET", f"/v1/executions/{id}")
        time.sleep(0.1)
        report(f"GET after {case}", stored_len, code, hwm(s.proc.pid) - before)
        print(f"{'':28} (answer {len(data) / 1e6:.2f} MB)", flush=True)
    finally:
        s.stop()

def each_binary(measure, *args):
    global irkit
    for irkit in irkits:
        measure(*args)

for case in ["zeros-8m", "zeros-2m", "zeros-cap", "nested-cap", "strings-8m", "unknown-cap"]:
    each_binary(measure_start, case)
each_binary(measure_event_and_read, "payload-cap", small_start, bodies["payload-cap"],
            len(bodies["payload-cap"]))
each_binary(measure_event_and_read, "args zeros-cap", bodies["zeros-cap"], small_event,
            len(bodies["zeros-cap"]))
each_binary(measure_event_and_read, "payload-strings-8m", small_start,
            bodies["payload-strings-8m"], len(bodies["payload-strings-8m"]))
PY
