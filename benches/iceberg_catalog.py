#!/usr/bin/env python3
"""Benchmark of Tablebay's Iceberg REST catalog (issue 4): loadTable throughput and latency, sequential
commit rate, and commits/s with contending writers. It starts the RELEASE binary itself on ephemeral ports
with a fresh data directory, prints one table, and stops. It is never part of the tests.

    cargo build --release -p tablebay
    ~/.cache/tablebay-venv/bin/python benches/iceberg_catalog.py [--seconds 10] [--snapshots 100] …

What it measures (targets of the issue on a 2-core machine: ≥ 5,000 loads/s, ≥ 200 sequential commits/s):
- `loadTable`: `GET /iceberg/v1/{prefix}/namespaces/bench/tables/t100` of a table with 100 snapshots, for
  `--seconds`, with 1 and with 16 concurrent clients (one keep-alive connection each, one process each);
  requests/s and p50/p99 latency.
- sequential commits: one client commits `--commits` (200) times in a row to a fresh table, each commit the
  catalog part of an append: `assert-ref-snapshot-id(main, parent)` + `add-snapshot` + `set-snapshot-ref`.
- contending commits: 8 writers commit the same kind of append to one table at once for `--seconds`; a
  writer that gets 409 reloads the table and tries again. Reports successful commits/s and 409s.

How the snapshots are made: the commits are raw REST commits whose `manifest-list` points at a path under the
table's metadata directory that is never written. The catalog does not read manifest lists on commit or
load, so this measures the catalog alone (metadata JSON write + pointer swap), not file I/O. With
`--snapshots-via pyiceberg` (needs the S3 data plane) the 100 snapshots of the load table are real PyIceberg
appends of a one-row Parquet file instead; the loaded document is then the same size.

The client: Python `http.client` with keep-alive, one OS process per concurrent client, authenticated with
a bearer token from the catalog's OAuth2 client-credentials endpoint (`/iceberg/v1/oauth/tokens`), so no
request is SigV4-signed on the client side (signing in Python would cost more than the server's work).
`--loader wrk` drives the loadTable rows with wrk (a C load generator, Debian package `wrk`) instead.
`--auth sigv4` signs every request with botocore's SigV4Auth instead (slower client, same server path plus
the signature check). The client's and the server's CPU seconds are printed, so you can see whether the
client was the limit: on 2 cores they share the machine.
"""

from __future__ import annotations

import argparse
import http.client
import json
import multiprocessing as mp
import os
import random
import re
import shutil
import sys
import time
import urllib.parse
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "clients" / "python"))

import requests  # noqa: E402

from tablebay_test import ACCESS_KEY_ID, REGION, SECRET_ACCESS_KEY  # noqa: E402
from tablebay_test.clients import make_client  # noqa: E402
from tablebay_test.server import TablebayServer  # noqa: E402

SCHEMA = {"type": "struct", "schema-id": 0, "fields": [
    {"id": 1, "name": "id", "type": "long", "required": True},
    {"id": 2, "name": "payload", "type": "string", "required": False},
]}


class BenchServer(TablebayServer):
    """The release binary, with the log filter given on the command line."""

    def __init__(self, workdir: Path, binary: Path, log_filter: str):
        super().__init__(workdir, arn_flavor="aws")
        self.binary = binary
        self.log_filter = log_filter

    def command(self) -> list[str]:
        cmd = super().command()
        cmd[0] = str(self.binary)
        return cmd

    def environment(self) -> dict[str, str]:
        env = super().environment()
        env["TABLEBAY_LOG"] = self.log_filter
        return env

    def start(self, timeout: float = 60.0) -> "BenchServer":
        """Like TablebayServer.start, but stdout goes straight to the log file: with the shipped `info` filter the
        server logs a line per request, and a Python thread relaying that pipe would cost the client CPU (or, if it
        fell behind, stall the server on a full pipe)."""
        import subprocess
        from tablebay_test.server import READY_LINE

        self.data_dir.mkdir(parents=True, exist_ok=True)
        log = open(self.log_path, "w", encoding="utf-8")
        self._proc = subprocess.Popen(self.command(), env=self.environment(), stdin=subprocess.DEVNULL,
                                      stdout=log, stderr=log, start_new_session=True)
        deadline = time.monotonic() + timeout
        urls: dict[str, str] = {}
        while len(urls) < 2:
            if time.monotonic() > deadline or self._proc.poll() is not None:
                raise RuntimeError(f"server not ready: {self.log_tail()}")
            for m in READY_LINE.finditer(self.log_path.read_text(errors="replace")):
                urls[m.group(1)] = m.group(2).rstrip("/")
            time.sleep(0.05)  # polling a file for the ready lines, bounded by the deadline above
        self.tables_url, self.s3_url = urls["tables"], urls["s3"]
        return self

    def cpu_seconds(self) -> float:
        """utime + stime of the server process, from /proc."""
        assert self._proc is not None
        fields = Path(f"/proc/{self._proc.pid}/stat").read_text().rsplit(")", 1)[1].split()
        ticks = os.sysconf("SC_CLK_TCK")
        return (int(fields[11]) + int(fields[12])) / ticks


# --- a tiny HTTP client ------------------------------------------------------------------------------

class Client:
    """Keep-alive HTTP to the tables listener; bearer or SigV4 auth."""

    def __init__(self, base_url: str, auth: str, token: str | None):
        u = urllib.parse.urlsplit(base_url)
        self.host, self.port = u.hostname, u.port
        self.base = base_url
        self.auth, self.token = auth, token
        self.conn = http.client.HTTPConnection(self.host, self.port, timeout=60)
        if auth == "sigv4":
            from botocore.auth import SigV4Auth
            from botocore.credentials import Credentials
            self._signer = SigV4Auth(Credentials(ACCESS_KEY_ID, SECRET_ACCESS_KEY), "osstables", REGION)

    def headers(self, method: str, path: str, body: bytes | None) -> dict[str, str]:
        hdrs = {"Content-Type": "application/json"} if body else {}
        if self.auth == "bearer":
            hdrs["Authorization"] = f"Bearer {self.token}"
            return hdrs
        from botocore.awsrequest import AWSRequest
        req = AWSRequest(method=method, url=self.base + path, data=body, headers=hdrs)
        self._signer.add_auth(req)
        return dict(req.headers.items())

    def request(self, method: str, path: str, body: dict | None = None) -> tuple[int, bytes]:
        data = json.dumps(body).encode() if body is not None else None
        hdrs = self.headers(method, path, data)
        try:
            self.conn.request(method, path, body=data, headers=hdrs)
            resp = self.conn.getresponse()
            return resp.status, resp.read()
        except (http.client.HTTPException, OSError):
            self.conn.close()
            self.conn = http.client.HTTPConnection(self.host, self.port, timeout=60)
            raise


def get_token(tables_url: str) -> str:
    resp = requests.post(f"{tables_url}/iceberg/v1/oauth/tokens", timeout=30, data={
        "grant_type": "client_credentials", "client_id": ACCESS_KEY_ID, "client_secret": SECRET_ACCESS_KEY,
        "scope": "catalog"})
    resp.raise_for_status()
    return resp.json()["access_token"]


# --- catalog helpers -----------------------------------------------------------------------------------

def setup_catalog(client: Client, warehouse: str) -> str:
    status, body = client.request("GET", "/iceberg/v1/config?warehouse=" + urllib.parse.quote(warehouse, safe=""))
    assert status == 200, (status, body[:300])
    cfg = json.loads(body)
    prefix = {**cfg.get("defaults", {}), **cfg.get("overrides", {})}["prefix"]
    status, body = client.request("POST", f"/iceberg/v1/{prefix}/namespaces", {"namespace": ["bench"], "properties": {}})
    assert status == 200, (status, body[:300])
    return prefix


def catalog_base(prefix: str) -> str:
    """The path under which Tablebay serves catalog `prefix`; a `prefix` starting with `/` is taken as another
    catalog's whole base path instead (`/v1/<bucket>`, `/v1`: benches/peers.py runs these helpers against peers)."""
    return prefix if prefix.startswith("/") else f"/iceberg/v1/{prefix}"


def create_table(client: Client, prefix: str, name: str) -> dict:
    status, body = client.request("POST", f"{catalog_base(prefix)}/namespaces/bench/tables",
                                  {"name": name, "schema": SCHEMA})
    assert status == 200, (status, body[:300])
    return json.loads(body)["metadata"]


def table_path(prefix: str, name: str) -> str:
    return f"{catalog_base(prefix)}/namespaces/bench/tables/{name}"


def append_commit(metadata: dict, name: str) -> dict:
    """The catalog part of an append on top of `metadata` (what PyIceberg and Java send)."""
    parent = metadata.get("current-snapshot-id")
    if parent == -1:
        parent = None
    snapshot_id = random.getrandbits(62) + 1
    seq = int(metadata.get("last-sequence-number", 0)) + 1
    snapshot = {
        "snapshot-id": snapshot_id, "sequence-number": seq, "timestamp-ms": int(time.time() * 1000),
        "manifest-list": f"{metadata['location']}/metadata/snap-{snapshot_id}-1-bench.avro",
        "summary": {"operation": "append", "added-records": "1", "total-records": str(seq)},
        "schema-id": metadata.get("current-schema-id", 0),
    }
    if parent is not None:
        snapshot["parent-snapshot-id"] = parent
    return {
        "identifier": {"namespace": ["bench"], "name": name},
        "requirements": [{"type": "assert-ref-snapshot-id", "ref": "main", "snapshot-id": parent}],
        "updates": [{"action": "add-snapshot", "snapshot": snapshot},
                    {"action": "set-snapshot-ref", "ref-name": "main", "type": "branch", "snapshot-id": snapshot_id}],
    }


def commit_snapshots(client: Client, prefix: str, name: str, metadata: dict, count: int) -> dict:
    for _ in range(count):
        status, body = client.request("POST", table_path(prefix, name), append_commit(metadata, name))
        assert status == 200, (status, body[:500])
        metadata = json.loads(body)["metadata"]
    return metadata


def pyiceberg_snapshots(server, warehouse: str, name: str, count: int) -> None:
    import pyarrow as pa
    from tablebay_test.iceberg import rest_catalog

    table = rest_catalog(server, warehouse).load_table(("bench", name))
    schema = pa.schema([pa.field("id", pa.int64(), nullable=False), pa.field("payload", pa.string())])
    for i in range(count):
        table.append(pa.Table.from_pylist([{"id": i, "payload": "x"}], schema=schema))


# --- workers (one process each) ------------------------------------------------------------------------

def load_worker(args) -> dict:
    base, auth, token, path, start_at, stop_at = args
    client = Client(base, auth, token)
    latencies, errors = [], 0
    while time.time() < start_at:  # warm-up: same requests, not recorded
        client.request("GET", path)
    while True:
        if time.time() >= stop_at:
            break
        t0 = time.perf_counter()
        try:
            status, _ = client.request("GET", path)
        except (http.client.HTTPException, OSError):
            errors += 1
            continue
        latencies.append(time.perf_counter() - t0)
        if status != 200:
            errors += 1
    cpu = os.times()
    return {"latencies": latencies, "errors": errors, "cpu": cpu.user + cpu.system}


def commit_worker(args) -> dict:
    base, auth, token, prefix, name, start_at, stop_at, max_commits = args
    client = Client(base, auth, token)
    status, body = client.request("GET", table_path(prefix, name))
    assert status == 200, body[:300]
    metadata = json.loads(body)["metadata"]
    while time.time() < start_at:
        time.sleep(0.001)
    latencies, conflicts, errors, commits = [], 0, 0, 0
    while time.time() < stop_at and commits < max_commits:
        t0 = time.perf_counter()
        status, body = client.request("POST", table_path(prefix, name), append_commit(metadata, name))
        if status == 200:
            latencies.append(time.perf_counter() - t0)
            commits += 1
            metadata = json.loads(body)["metadata"]
        elif status == 409:
            conflicts += 1
            status, body = client.request("GET", table_path(prefix, name))
            if status == 200:
                metadata = json.loads(body)["metadata"]
        else:
            errors += 1
            if errors > 50:
                break
    cpu = os.times()
    return {"latencies": latencies, "conflicts": conflicts, "errors": errors, "commits": commits,
            "cpu": cpu.user + cpu.system, "last_status": status, "last_body": body[:300].decode(errors="replace")}


def parse_wrk_duration(text: str) -> float:
    """`1.23ms` / `850.00us` / `1.02s` → seconds."""
    m = re.fullmatch(r"([0-9.]+)(us|ms|s|m)", text.strip())
    assert m, text
    return float(m.group(1)) * {"us": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0}[m.group(2)]


def run_wrk(url: str, token: str, clients: int, seconds: float) -> dict:
    """`wrk` (C, one event-loop thread) with `clients` keep-alive connections: requests, p50, p99, errors."""
    import resource
    import subprocess

    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    out = subprocess.run(["wrk", "-t1", f"-c{clients}", f"-d{max(1, int(seconds))}s", "--latency",
                          "-H", f"Authorization: Bearer {token}", url],
                         capture_output=True, text=True, timeout=seconds + 60, check=True).stdout
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    requests_done = int(re.search(r"(\d+) requests in", out).group(1))
    p50 = parse_wrk_duration(re.search(r"^\s+50%\s+(\S+)", out, re.M).group(1))
    p99 = parse_wrk_duration(re.search(r"^\s+99%\s+(\S+)", out, re.M).group(1))
    non2xx = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    socket_errors = re.search(r"Socket errors: (.*)", out)
    errors = int(non2xx.group(1)) if non2xx else 0
    if socket_errors:
        errors += sum(int(n) for n in re.findall(r"\d+", socket_errors.group(1)))
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return {"requests": requests_done, "p50": p50, "p99": p99, "errors": errors, "cpu": cpu}


def percentile(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    values = sorted(values)
    return values[min(len(values) - 1, int(q * len(values)))]


def run_parallel(fn, jobs: list) -> list[dict]:
    ctx = mp.get_context("fork")
    with ctx.Pool(len(jobs)) as pool:
        return pool.map(fn, jobs)


# --- main -----------------------------------------------------------------------------------------------

def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    target = os.environ.get("CARGO_TARGET_DIR") or str(Path.home() / ".cache" / "tablebay-target")
    parser.add_argument("--binary", type=Path, default=Path(os.environ.get("TABLEBAY_RELEASE_BIN",
                                                                          f"{target}/release/tablebay")))
    parser.add_argument("--seconds", type=float, default=10.0, help="duration of each timed phase")
    parser.add_argument("--warmup", type=float, default=1.0)
    parser.add_argument("--snapshots", type=int, default=100, help="snapshots of the loaded table")
    parser.add_argument("--snapshots-via", choices=["raw", "pyiceberg"], default="raw")
    parser.add_argument("--commits", type=int, default=200,
                        help="sequential commits (the table grows one snapshot per commit: 200 ≈ the 100-snapshot table on average)")
    parser.add_argument("--writers", type=int, default=8)
    parser.add_argument("--clients", type=int, nargs="+", default=[1, 16])
    parser.add_argument("--auth", choices=["bearer", "sigv4"], default="bearer")
    parser.add_argument("--loader", choices=["python", "wrk"], default="python",
                        help="loadTable client: Python processes (default) or wrk (Debian package `wrk`; bearer only)")
    parser.add_argument("--log", default="info", help="TABLEBAY_LOG for the server (default: the shipped info)")
    args = parser.parse_args()

    if not args.binary.is_file():
        print(f"no release binary at {args.binary}: cargo build --release -p tablebay", file=sys.stderr)
        return 2
    load_before = os.getloadavg()[0]
    workdir = Path(os.environ.get("TMPDIR", "/tmp")) / f"tablebay-bench-{os.getpid()}"
    server = BenchServer(workdir, args.binary, args.log)
    server.start()
    rows = []
    try:
        warehouse = make_client(server.tables_url).create_table_bucket(name="bench")["arn"]
        token = get_token(server.tables_url) if args.auth == "bearer" else None
        client = Client(server.tables_url, args.auth, token)
        prefix = setup_catalog(client, warehouse)

        # The loaded table: 100 snapshots.
        metadata = create_table(client, prefix, "t100")
        if args.snapshots_via == "pyiceberg":
            pyiceberg_snapshots(server, warehouse, "t100", args.snapshots)
        else:
            commit_snapshots(client, prefix, "t100", metadata, args.snapshots)
        status, body = client.request("GET", table_path(prefix, "t100"))
        assert status == 200, body[:300]
        loaded = json.loads(body)["metadata"]
        assert len(loaded.get("snapshots", [])) == args.snapshots, len(loaded.get("snapshots", []))
        doc_kib = len(body) / 1024

        if args.loader == "wrk" and (args.auth != "bearer" or not shutil.which("wrk")):
            print("--loader wrk needs the wrk binary (apt-get install wrk) and --auth bearer", file=sys.stderr)
            return 2
        for clients in args.clients:
            if args.loader == "wrk":
                url = server.tables_url + table_path(prefix, "t100")
                run_wrk(url, token, clients, args.warmup)  # warm-up, not recorded
                cpu0 = server.cpu_seconds()
                w = run_wrk(url, token, clients, args.seconds)
                rows.append((f"loadTable, {args.snapshots} snapshots ({doc_kib:.0f} KiB), wrk", clients,
                             w["requests"], w["requests"] / args.seconds, w["p50"], w["p99"], w["errors"],
                             server.cpu_seconds() - cpu0, w["cpu"], "≥ 5000/s"))
                continue
            cpu0 = server.cpu_seconds()
            start_at = time.time() + args.warmup
            stop_at = start_at + args.seconds
            out = run_parallel(load_worker, [(server.tables_url, args.auth, token, table_path(prefix, "t100"),
                                              start_at, stop_at)] * clients)
            server_cpu = server.cpu_seconds() - cpu0
            lat = [x for o in out for x in o["latencies"]]
            rows.append((f"loadTable, {args.snapshots} snapshots ({doc_kib:.0f} KiB)", clients, len(lat),
                         len(lat) / args.seconds, percentile(lat, 0.5), percentile(lat, 0.99),
                         sum(o["errors"] for o in out), server_cpu, sum(o["cpu"] for o in out), "≥ 5000/s"))

        # Sequential commits on a fresh table.
        metadata = create_table(client, prefix, "seq")
        cpu0 = server.cpu_seconds()
        lat = []
        t_start = time.perf_counter()
        for _ in range(args.commits):
            t0 = time.perf_counter()
            status, body = client.request("POST", table_path(prefix, "seq"), append_commit(metadata, "seq"))
            assert status == 200, (status, body[:500])
            lat.append(time.perf_counter() - t0)
            metadata = json.loads(body)["metadata"]
        elapsed = time.perf_counter() - t_start
        rows.append((f"sequential commits (add-snapshot), {args.commits}", 1, len(lat), len(lat) / elapsed,
                     percentile(lat, 0.5), percentile(lat, 0.99), 0, server.cpu_seconds() - cpu0,
                     float("nan"), "≥ 200/s"))

        # Contending writers on one table.
        create_table(client, prefix, "contended")
        cpu0 = server.cpu_seconds()
        start_at = time.time() + 0.5
        stop_at = start_at + args.seconds
        out = run_parallel(commit_worker, [(server.tables_url, args.auth, token, prefix, "contended",
                                            start_at, stop_at, 10**9)] * args.writers)
        server_cpu = server.cpu_seconds() - cpu0
        lat = [x for o in out for x in o["latencies"]]
        commits = sum(o["commits"] for o in out)
        conflicts = sum(o["conflicts"] for o in out)
        errors = sum(o["errors"] for o in out)
        rows.append((f"contending commits ({conflicts} × 409, reload + retry)", args.writers, commits,
                     commits / args.seconds, percentile(lat, 0.5), percentile(lat, 0.99), errors, server_cpu,
                     sum(o["cpu"] for o in out), ""))
        if errors:
            print("contending writers saw errors, e.g.:", [o["last_status"] for o in out], out[0]["last_body"])
        status, body = client.request("GET", table_path(prefix, "contended"))
        landed = len(json.loads(body)["metadata"].get("snapshots", []))
        assert landed == commits, f"{landed} snapshots for {commits} successful commits"
    finally:
        server.stop()

    print(f"\nTablebay Iceberg catalog benchmark: {args.binary}, {os.cpu_count()} CPUs, auth {args.auth}, "
          f"TABLEBAY_LOG={args.log}, {args.seconds:.0f} s per timed phase, snapshots via {args.snapshots_via}; "
          f"1-min load average {load_before:.2f} before, {os.getloadavg()[0]:.2f} after\n")
    header = ("scenario", "clients", "requests", "per s", "p50 ms", "p99 ms", "errors", "srv CPU s", "cli CPU s",
              "target")
    table = [header] + [(r[0], str(r[1]), str(r[2]), f"{r[3]:.0f}", f"{r[4] * 1000:.2f}", f"{r[5] * 1000:.2f}",
                         str(r[6]), f"{r[7]:.1f}", "-" if r[8] != r[8] else f"{r[8]:.1f}", r[9]) for r in rows]
    widths = [max(len(row[i]) for row in table) for i in range(len(header))]
    for n, row in enumerate(table):
        print("  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(row, widths))))
        if n == 0:
            print("  ".join("-" * w for w in widths))
    return 0


if __name__ == "__main__":
    sys.exit(main())
