"""Starts and stops a real `tablebay serve` process for a test session or module.

The binary is `binary_path()` (tablebay_test/binary.py: `TABLEBAY_BIN`, checked against this tree's sources).
The server is started on ephemeral ports (`127.0.0.1:0`) with a temporary data directory; its
addresses are read from the ready lines it prints on stdout
(`tablebay tables listener ready at http://127.0.0.1:PORT`, one per listener). Waiting is bounded by
a deadline; there are no sleeps. stdout and stderr go to `tablebay.log` in the data directory's
parent, whose tail is shown when the server fails to start.
"""

from __future__ import annotations

import os
import queue
import re
import signal
import subprocess
import threading
import time
from pathlib import Path

import requests

from . import ACCESS_KEY_ID, ACCOUNT_ID, REGION, SECRET_ACCESS_KEY
from .binary import binary_path  # noqa: F401 (re-exported: callers run the CLI with it)

READY_LINE = re.compile(r"tablebay (tables|s3) listener ready at (http://\S+)")


class ServerStartError(RuntimeError):
    pass


class TablebayServer:
    """One running `tablebay serve`; `tables_url` and `s3_url` are set once it is ready."""

    def __init__(self, workdir: Path, arn_flavor: str | None = "aws", extra_args: tuple[str, ...] = (),
                 account_id: str = ACCOUNT_ID):
        self.workdir = Path(workdir)
        self.account_id = account_id
        self.data_dir = self.workdir / "data"
        self.log_path = self.workdir / "tablebay.log"
        self.arn_flavor = arn_flavor
        self.extra_args = extra_args
        self.tables_url: str | None = None
        self.s3_url: str | None = None
        self._proc: subprocess.Popen | None = None
        self._lines: queue.Queue[str | None] = queue.Queue()
        self._log = None

    def command(self) -> list[str]:
        cmd = [
            str(binary_path()), "serve",
            "--data-dir", str(self.data_dir),
            "--tables-addr", "127.0.0.1:0",
            "--s3-addr", "127.0.0.1:0",
            "--region", REGION,
            "--account-id", self.account_id,
        ]
        if self.arn_flavor is not None:
            cmd += ["--arn-flavor", self.arn_flavor]
        return cmd + list(self.extra_args)

    def environment(self) -> dict[str, str]:
        # Only our own TABLEBAY_* settings: a developer's exported TABLEBAY_META_URL etc. must not leak in.
        env = {k: v for k, v in os.environ.items() if not k.startswith("TABLEBAY_")}
        env["TABLEBAY_ROOT_ACCESS_KEY_ID"] = ACCESS_KEY_ID
        env["TABLEBAY_ROOT_SECRET_ACCESS_KEY"] = SECRET_ACCESS_KEY
        env.setdefault("RUST_BACKTRACE", "1")
        return env

    def start(self, timeout: float = 60.0) -> "TablebayServer":
        binary_path()  # checked once per process: raises BinaryError for a missing or stale binary
        self.data_dir.mkdir(parents=True, exist_ok=True)
        self._lines = queue.Queue()  # a fresh queue per process: restarts must not see the old one's end
        self._log = open(self.log_path, "a", encoding="utf-8", errors="replace")
        self._log.write(f"$ {' '.join(self.command())}\n")
        self._log.flush()
        self._proc = subprocess.Popen(
            self.command(), env=self.environment(), stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE, stderr=self._log, text=True, errors="replace",
            start_new_session=True,
        )
        threading.Thread(target=self._pump_stdout, daemon=True).start()

        deadline = time.monotonic() + timeout
        urls: dict[str, str] = {}
        while len(urls) < 2:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                self.stop()
                raise ServerStartError(f"no ready lines within {timeout}s; got {urls}\n{self.log_tail()}")
            try:
                line = self._lines.get(timeout=remaining)
            except queue.Empty:
                continue
            if line is None:  # stdout closed: the process exited
                code = self._proc.wait()
                raise ServerStartError(f"tablebay exited with {code} before it was ready\n{self.log_tail()}")
            m = READY_LINE.search(line)
            if m:
                urls[m.group(1)] = m.group(2).rstrip("/")
        self.tables_url, self.s3_url = urls["tables"], urls["s3"]
        return self

    def _pump_stdout(self) -> None:
        # Bound to this process's pipe, log and queue: after kill() and a restart, a late line from the old
        # process must not reach the new one's queue.
        proc, log, lines = self._proc, self._log, self._lines
        assert proc is not None and proc.stdout is not None
        for line in proc.stdout:
            if not log.closed:
                log.write(line)
                log.flush()
            lines.put(line)
        lines.put(None)

    def health(self) -> requests.Response:
        return requests.get(f"{self.tables_url}/health", timeout=10)

    def stop(self, timeout: float = 15.0) -> None:
        proc = self._proc
        if proc is None:
            return
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(timeout=timeout)
        self._proc = None
        if self._log is not None:
            self._log.close()
            self._log = None

    def kill(self) -> None:
        """`kill -9` of the server (its whole process group), as a crash; `start()` may follow on the same
        data directory."""
        proc = self._proc
        if proc is None:
            return
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
        self._proc = None
        if self._log is not None:
            self._log.close()
            self._log = None

    @property
    def pid(self) -> int | None:
        return self._proc.pid if self._proc is not None else None

    def log_tail(self, lines: int = 60) -> str:
        try:
            text = self.log_path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            return "(no server log)"
        return "--- tablebay log tail ---\n" + "\n".join(text.splitlines()[-lines:])
