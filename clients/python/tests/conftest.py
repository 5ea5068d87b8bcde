"""Fixtures: the irkit binary, a real `irkit tcc serve` on loopback (SQLite
in a temporary directory) with the order saga's effects routed to workers,
and the example workflows registered on it."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Iterator, List, Optional

import pytest

ROOT = Path(__file__).resolve().parents[3]
EXAMPLES = ROOT / "examples" / "tcc" / "src"
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

PROVIDERS = """
[[route]]
pattern = "inventory.*"
provider = "worker"

[[route]]
pattern = "payment.*"
provider = "worker"

[[route]]
pattern = "shipping.*"
provider = "worker"

[[route]]
pattern = "*"
provider = "echo"
"""


def irkit_path() -> str:
    p = os.environ.get("IRKIT_BIN") or str(ROOT / "target" / "release" / "irkit")
    if not Path(p).is_file():
        pytest.fail(f"irkit not built: {p} (cargo build --release -p irkit, or set IRKIT_BIN)")
    return p


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Server:
    """`irkit tcc serve` on a fixed port (so that a restart keeps its URL)."""

    def __init__(self, workdir: Path, extra: Optional[List[str]] = None, database: Optional[str] = None) -> None:
        workdir.mkdir(parents=True, exist_ok=True)
        self.workdir = workdir
        self.database = database or str(workdir / "host.db")
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.extra = extra or []
        (workdir / "providers.toml").write_text(PROVIDERS)
        self.proc: Optional[subprocess.Popen] = None
        self.start()

    def start(self) -> None:
        self.proc = subprocess.Popen(
            [
                irkit_path(), "tcc", "serve", "--listen", f"127.0.0.1:{self.port}",
                "--database", self.database,
                "--providers", str(self.workdir / "providers.toml"), *self.extra,
            ],
            stdout=subprocess.PIPE,
            stderr=open(self.workdir / "serve.log", "ab"),
            env={k: v for k, v in os.environ.items() if k not in ("IRKIT_TCC_TOKEN", "TCC_CRASH_AT")},
        )
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline().decode()
        assert line.startswith("listening on "), line

    def kill(self) -> None:
        if self.proc and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()

    def stop(self) -> None:
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()

    def register(self, source: Path, name: str) -> None:
        subprocess.run(
            [irkit_path(), "tcc", "register", str(source), "--name", name, "--server", self.url],
            check=True,
            capture_output=True,
        )


@pytest.fixture
def irkit() -> str:
    return irkit_path()


@pytest.fixture
def server(tmp_path: Path) -> Iterator[Server]:
    s = Server(tmp_path)
    s.register(EXAMPLES / "order_saga.py", "order_saga")
    s.register(EXAMPLES / "approval.py", "approval")
    try:
        yield s
    finally:
        s.stop()


def wait_until(cond, timeout: float = 20.0) -> None:
    end = time.monotonic() + timeout
    while not cond():
        assert time.monotonic() < end, "condition not met in time"
        time.sleep(0.02)
