"""A scale-out deployment on loopback, as docs/deployment.md describes it: a PostgreSQL of its own (so a test can
restart it), SeaweedFS as the S3 blob store, N Tablebay instances on both, and HAProxy in front of both listeners.
Every part is started by the project's scripts (scripts/postgres.sh, scripts/seaweedfs.sh, scripts/haproxy.sh),
on ports picked free at start and kept across restarts, so the balancer's configuration stays valid.

`Cluster.start()` brings everything up; `kill(i)`/`restart(i)` crash and restart instance i (kill -9 of its
process group); `restart_postgres()` and `restart_weed()` take a dependency down and bring it back;
`requests()` parses HAProxy's request log (one line per request, see scripts/haproxy.sh); `stop()` ends it all.
"""

from __future__ import annotations

import os
import random
import shutil
import socket
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

import requests

from . import REGION
from .server import TablebayServer

REPO = Path(__file__).resolve().parents[3]
WEED_BUCKET = "tablebay"
WEED_KEY = "weedtestkey"
WEED_SECRET = "weedtestsecret"
# The master key every instance shares (instances whose keys differ refuse to start).
MASTER_KEYS = "default 1 AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=\n"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def weed_base_port() -> int:
    """A port P with P..P+4 and the gRPC twins (+10000) of P..P+3 all free (SeaweedFS's layout, scripts/seaweedfs.sh:
    S3, master, volume, filer, Iceberg REST)."""
    for _ in range(200):
        base = random.randint(20000, 25000)
        ports = [base + i for i in range(5)] + [base + i + 10000 for i in range(4)]
        try:
            for port in ports:
                with socket.socket() as s:
                    s.bind(("127.0.0.1", port))
        except OSError:
            continue
        return base
    raise RuntimeError("no free port range for SeaweedFS")


def script(name: str, *args: str, env: dict[str, str], timeout: float = 900) -> str:
    """Runs scripts/NAME with ARGS; its stdout (its stderr goes to ours)."""
    done = subprocess.run(["bash", str(REPO / "scripts" / name), *args], env={**os.environ, **env},
                          stdout=subprocess.PIPE, text=True, timeout=timeout)
    if done.returncode != 0:
        raise RuntimeError(f"scripts/{name} {' '.join(args)} failed with {done.returncode}")
    return done.stdout.strip()


class Instance(TablebayServer):
    """A Tablebay instance on fixed ports (the balancer's configuration names them), on the shared stores."""

    def __init__(self, workdir: Path, tables_port: int, s3_port: int, shared: list[str], env: dict[str, str]):
        super().__init__(workdir, arn_flavor="aws", extra_args=tuple(shared))
        self.ports = (tables_port, s3_port)
        self.extra_env = env

    def command(self) -> list[str]:
        cmd = super().command()
        for flag, port in zip(("--tables-addr", "--s3-addr"), self.ports):
            cmd[cmd.index(flag) + 1] = f"127.0.0.1:{port}"
        return cmd

    def environment(self) -> dict[str, str]:
        return {**super().environment(), **self.extra_env}


@dataclass
class Request:
    """One request as HAProxy logged it."""
    at: float           # accept time, epoch seconds
    frontend: str       # tables_in | s3_in
    server: str         # tb1… or <NOSRV>
    status: int
    ms: int
    from_server: bool   # the instance answered (HAProxy did not end the request itself)
    retry_after: str    # its Retry-After header, "-" when there was none
    method: str
    uri: str


class Cluster:
    def __init__(self, workdir: Path, instances: int = 3, backend: str = "weed"):
        self.workdir = Path(workdir)
        self.n = instances
        self.backend = backend
        self.pg_env = {"TABLEBAY_PG_DIR": str(self.workdir / "pg"), "TABLEBAY_PG_PORT": str(free_port())}
        self.weed_env = {"TABLEBAY_WEED_DIR": str(self.workdir / "weed"), "TABLEBAY_WEED_PORT": str(weed_base_port()),
                         "TABLEBAY_WEED_BUCKET": WEED_BUCKET, "TABLEBAY_WEED_ACCESS_KEY": WEED_KEY,
                         "TABLEBAY_WEED_SECRET_KEY": WEED_SECRET}
        self.haproxy_env = {"TABLEBAY_HAPROXY_DIR": str(self.workdir / "haproxy")}
        self.instances: list[Instance] = []
        self.failed = False     # set when a test using the cluster failed: its directory is kept
        self.tables_url = self.s3_url = ""
        self.pg_url = self.weed_url = ""

    # --- start and stop ---

    def start(self) -> "Cluster":
        self.workdir.mkdir(parents=True, exist_ok=True)
        self.pg_url = script("postgres.sh", "start", env=self.pg_env)
        if self.backend == "weed":
            self.weed_url = script("seaweedfs.sh", "start", env=self.weed_env)
        keys = self.workdir / "master.keys"
        keys.write_text(MASTER_KEYS)
        keys.chmod(0o600)
        balancer_tables, balancer_s3 = free_port(), free_port()
        shared = ["--meta-url", self.pg_url, "--encryption-key-file", str(keys),
                  "--s3-public-url", f"http://127.0.0.1:{balancer_s3}"]
        env: dict[str, str] = {"TABLEBAY_LOG": "warn"}
        if self.backend == "weed":
            shared += ["--blob-url", f"s3://{WEED_BUCKET}/tablebay"]
            env.update({"TABLEBAY_BLOB_S3_ENDPOINT": self.weed_url, "TABLEBAY_BLOB_S3_REGION": REGION,
                        "TABLEBAY_BLOB_S3_ACCESS_KEY_ID": WEED_KEY, "TABLEBAY_BLOB_S3_SECRET_ACCESS_KEY": WEED_SECRET,
                        "TABLEBAY_BLOB_S3_PATH_STYLE": "true"})
        else:
            shared += ["--blob-url", str(self.workdir / "blobs")]
        for i in range(self.n):
            inst = Instance(self.workdir / f"tb{i + 1}", free_port(), free_port(), shared, env)
            self.instances.append(inst)
            inst.start()
        listeners = [f"127.0.0.1:{t},127.0.0.1:{s}" for t, s in (i.ports for i in self.instances)]
        out = script("haproxy.sh", "start", str(balancer_tables), str(balancer_s3), *listeners,
                     env=self.haproxy_env).splitlines()
        self.tables_url, self.s3_url = out[0], out[1]
        self.wait_all_up()
        return self

    def stop(self) -> None:
        for inst in self.instances:
            inst.stop()
        for name, env in (("haproxy.sh", self.haproxy_env), ("seaweedfs.sh", self.weed_env),
                          ("postgres.sh", self.pg_env)):
            if name == "seaweedfs.sh" and self.backend != "weed":
                continue
            try:
                script(name, "stop", env=env, timeout=60)
            except Exception as e:  # noqa: BLE001 - best effort at teardown
                print(f"stopping {name}: {e}")

    def remove(self) -> None:
        shutil.rmtree(self.workdir, ignore_errors=True)

    # --- faults ---

    def kill(self, i: int) -> None:
        self.instances[i].kill()

    def restart(self, i: int) -> None:
        self.instances[i].start()

    def restart_postgres(self, down_for: float) -> None:
        script("postgres.sh", "stop", env=self.pg_env, timeout=120)
        time.sleep(down_for)
        script("postgres.sh", "start", env=self.pg_env, timeout=120)

    def restart_weed(self, down_for: float) -> None:
        script("seaweedfs.sh", "kill", env=self.weed_env, timeout=60)
        time.sleep(down_for)
        script("seaweedfs.sh", "start", env=self.weed_env, timeout=180)

    # --- observation ---

    def healthy(self, i: int) -> bool:
        try:
            return requests.get(f"{self.instances[i].tables_url}/health", timeout=2).status_code == 200
        except requests.RequestException:
            return False

    def wait_all_up(self, timeout: float = 60) -> None:
        """Until every instance answers /health directly and the balancer has all of them in (its checks run
        every 500 ms and need 2 successes)."""
        deadline = time.monotonic() + timeout
        while not all(self.healthy(i) for i in range(self.n)):
            assert time.monotonic() < deadline, "instances not healthy"
            time.sleep(0.2)
        time.sleep(1.2)

    def failure_report(self, lines: int = 30) -> list[tuple[str, str]]:
        """What a failed test should show: each instance's error lines (its log is at warn level, so these are
        what it answered 500 for, with the cause) and the tails of the dependencies' logs."""
        sections = []
        for i, inst in enumerate(self.instances):
            text = inst.log_path.read_text(errors="replace") if inst.log_path.exists() else ""
            errors = [line for line in text.splitlines() if " ERROR tablebay" in line or "panicked" in line]
            sections.append((f"tb{i + 1} error lines ({len(errors)})", "\n".join(errors[-lines:])))
        for name, path in (("seaweedfs", Path(self.weed_env["TABLEBAY_WEED_DIR"]) / "weed.log"),
                           ("postgres", Path(self.pg_env["TABLEBAY_PG_DIR"]) / "postgres.log")):
            if path.exists():
                sections.append((f"{name} log tail", "\n".join(path.read_text(errors="replace").splitlines()[-lines:])))
        return sections

    def requests(self) -> list[Request]:
        out = []
        log = Path(self.haproxy_env["TABLEBAY_HAPROXY_DIR"]) / "haproxy.log"
        for line in log.read_text(errors="replace").splitlines():
            parts = line.split(" ", 9)
            if len(parts) < 10 or parts[0] != "TB":
                continue
            try:
                out.append(Request(at=float(parts[1]), frontend=parts[2], server=parts[3],
                                   status=int(parts[4]), ms=int(parts[5]), from_server=parts[6].startswith("-"),
                                   retry_after=parts[7], method=parts[8], uri=parts[9]))
            except ValueError:
                continue
        return out
