#!/usr/bin/env python3
"""Tablebay beside its peers (issue 22): the same loader, the same data and named durability settings, on one disk,
on loopback. It is never part of the tests.

    scripts/peers.sh install                     # once: builds `weed`, resolves the reference server's jars
    ~/.cache/tablebay-venv/bin/python benches/peers.py --binary PATH [--rounds 3] [--seconds 5]
    ~/.cache/tablebay-venv/bin/python benches/peers.py --binary PATH --columns weed-fsync,rest --no-syncs

The columns (each durability setting named):

- `tb-full`, `tb-relaxed`: `tablebay serve --durability full` (the default) and `--durability relaxed`;
- `weed-fsync`, `weed-default`: SeaweedFS (`weed server -filer -s3`, its S3 gateway and its Iceberg REST port) with
  `fs.configure -locationPrefix=/ -fsync=true` (volume writes and the filer's metadata log synced) and with its
  default (no fsync), both started by `scripts/peers.sh`;
- `rest`: Apache Iceberg's reference REST catalog server (iceberg-open-api 1.10.1 test fixtures) on a JDBC SQLite
  catalog file: SQLite's default `synchronous=FULL` syncs the catalog row, the metadata JSON files it writes through
  Hadoop's local file system are not synced. Catalog rows only (it has no S3 data plane);
- `plain`: the physical reference, byte rows only: the same writes to plain files in Python with and without fsync
  (one column each), and reads of them from the page cache.

The cells (medians of `--rounds` rounds; the columns run one after the other in each round, in alternating order,
each with a fresh server and data directory under `--workdir`, default `~/.cache/tablebay-bench`):

- 4 KiB PUT with 16 connections to new keys, and 4 KiB GET with 16 connections of 256 objects: `wrk` (one thread,
  keep-alive) cycling through presigned `UNSIGNED-PAYLOAD` URLs (benches/s3_throughput.py `run_wrk`);
- 64 MiB PUT and GET, one stream: Python `http.client` with presigned URLs, 4 objects, MiB/s;
- loadTable of a table with 100 snapshots, with 1 and 16 connections: `wrk` with a bearer token
  (benches/iceberg_catalog.py `run_wrk`): loads/s, p50, p99;
- sequential commits: one client, `assert-ref-snapshot-id` + `add-snapshot` + `set-snapshot-ref` in a loop (the
  catalog part of an append, benches/iceberg_catalog.py `append_commit`): commits/s, p99;
- 8 writers on one table (on 409 a writer reloads and retries): successful commits/s and the 409 count, and a check
  that the table holds exactly as many snapshots as commits were acknowledged;
- 8 clients on 8 tables: aggregate commits/s.

Before the rounds, `strace -f -c` counts sync calls (fsync, fdatasync, sync_file_range, syncfs) per 4 KiB PUT, per
64 MiB PUT and per commit for every server column (Tablebay through benches/durability.py `count_syncs`; the peers by
attaching to their running process, minus an idle baseline), which is how the peers' durability settings are checked.

Credentials: the S3 requests of every column are presigned with the test harness's root key, which SeaweedFS is
started with too. The Iceberg REST catalogs get a bearer token from their own OAuth2 client-credentials endpoint
(Tablebay, SeaweedFS); the reference server checks no Authorization header.
"""

from __future__ import annotations

import argparse
import hashlib
import http.client
import json
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from urllib.parse import urlsplit

BENCHES = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCHES))

# durability.py puts clients/python on the path and points s3_throughput's presigning at the harness's root key.
from durability import DurabilityServer, Setup, count_syncs, disk_reference, put  # noqa: E402
import iceberg_catalog  # noqa: E402
from iceberg_catalog import (Client, catalog_base, commit_snapshots, commit_worker, create_table,  # noqa: E402
                             percentile, run_parallel, table_path)
from s3_throughput import _file_worker, presign, run_wrk, sign  # noqa: E402
from s3_throughput import run_parallel as run_processes  # noqa: E402
from tablebay_test import ACCESS_KEY_ID, SECRET_ACCESS_KEY  # noqa: E402

KIB, MIB = 1024, 1024 * 1024
PEERS_SH = BENCHES.parent / "scripts" / "peers.sh"
SNAPSHOTS = 100

COLUMNS = {
    "tb-full": "Tablebay `--durability full`",
    "tb-relaxed": "Tablebay `--durability relaxed`",
    "weed-fsync": "SeaweedFS `fs.configure -fsync=true`",
    "weed-default": "SeaweedFS default (no fsync)",
    "rest": "Iceberg reference REST (SQLite FULL, metadata files unsynced)",
    "plain-fsync": "plain copy + fsync",
    "plain": "plain copy, no fsync",
}
# What runs in one slot of a round: the two plain columns are measured together.
SLOTS = ["tb-full", "tb-relaxed", "weed-fsync", "weed-default", "rest", "plain"]
S3_CELLS = ["4 KiB PUT, 16 conns (objects/s)", "4 KiB GET, 16 conns (objects/s)",
            "64 MiB PUT, 1 stream (MiB/s)", "64 MiB GET, 1 stream (MiB/s)"]
CATALOG_CELLS = ["loadTable, 1 conn (/s; p50 / p99 ms)", "loadTable, 16 conns (/s; p50 / p99 ms)",
                 "sequential commits (/s; p99 ms)", "8 writers, one table (commits/s; 409s)",
                 "8 clients, 8 tables (commits/s)"]
DISK_CELLS = ["disk: 4 KiB append + fdatasync (/s)", "disk: new 4 KiB file + fdatasync + dir fsync (/s)"]


# --- the servers ------------------------------------------------------------------------------------------

class Target:
    """One server under test: its S3 data plane (`s3_url`, `bucket`; None without one) and its Iceberg REST catalog
    (`catalog_url`, the `base` path of its namespaces, a bearer `token`)."""

    s3_url: str | None = None
    bucket: str | None = None
    catalog_url: str
    base: str
    token: str
    pid: int

    def catalog(self) -> Client:
        return Client(self.catalog_url, "bearer", self.token)

    def stop(self) -> None:
        raise NotImplementedError


class TablebayTarget(Target):
    def __init__(self, binary: Path, work: Path, durability: str):
        self.server = DurabilityServer(work, binary, durability)
        self.server.start()
        try:
            setup = Setup(self.server)
        except BaseException:
            self.stop()
            raise
        self.s3_url, self.bucket = self.server.s3_url, setup.bucket
        self.catalog_url, self.base, self.token = self.server.tables_url, catalog_base(setup.prefix), setup.token
        self.pid = self.server._proc.pid

    def stop(self) -> None:
        self.server.stop(timeout=30)


class PeerTarget(Target):
    """A peer started by scripts/peers.sh in its own data directory `work`."""

    def __init__(self, peer: str, work: Path, mode: str | None = None):
        self.peer, self.work = peer, work
        work.mkdir(parents=True, exist_ok=True)
        # SeaweedFS accepts the harness's root key, so one presigning serves every column.
        self.env = {**os.environ, "TABLEBAY_PEERS_DIR": str(work), "TABLEBAY_WEED_ACCESS_KEY": ACCESS_KEY_ID,
                    "TABLEBAY_WEED_SECRET_KEY": SECRET_ACCESS_KEY}
        with open(work / "peers.sh.log", "a") as log:
            out = subprocess.run([str(PEERS_SH), "start", peer] + ([mode] if mode else []), env=self.env,
                                 stdout=subprocess.PIPE, stderr=log, text=True, timeout=300)
        if out.returncode != 0:
            self.stop()
            raise RuntimeError(f"scripts/peers.sh start {peer} failed: {(work / 'peers.sh.log').read_text()[-3000:]}")
        self.pid = int(subprocess.run([str(PEERS_SH), "pid", peer], env=self.env, capture_output=True, text=True,
                                      check=True).stdout.strip())
        try:
            if peer == "seaweedfs":
                urls = dict(part.split("=", 1) for part in out.stdout.split())
                self.s3_url, self.bucket, self.catalog_url = urls["s3"], "tablebay", urls["iceberg"]
                self.base = "/v1/" + create_weed_table_bucket(self.s3_url, "bench")
                self.token = weed_token(self.catalog_url)
            else:
                self.catalog_url, self.base, self.token = out.stdout.strip(), "/v1", "unused"
            status, body = self.catalog().request("POST", f"{self.base}/namespaces",
                                                  {"namespace": ["bench"], "properties": {}})
            assert status == 200, (status, body[:300])
        except BaseException:
            self.stop()
            raise

    def stop(self) -> None:
        subprocess.run([str(PEERS_SH), "stop", self.peer], env=self.env, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL, timeout=60)


def create_weed_table_bucket(s3_url: str, name: str) -> str:
    """CreateTableBucket through SeaweedFS's S3 Tables API (`PUT /buckets`, SigV4 for service s3tables)."""
    netloc = urlsplit(s3_url).netloc
    body = json.dumps({"name": name}).encode()
    headers = sign("PUT", netloc, "/buckets", "", {"content-type": "application/json"},
                   hashlib.sha256(body).hexdigest(), service="s3tables")
    del headers["host"]
    conn = http.client.HTTPConnection(netloc, timeout=60)
    conn.request("PUT", "/buckets", body=body, headers=headers)
    resp = conn.getresponse()
    data = resp.read()
    conn.close()
    assert resp.status == 200, (resp.status, data[:300])
    return name


def weed_token(catalog_url: str) -> str:
    import requests

    resp = requests.post(f"{catalog_url}/v1/oauth/tokens", timeout=30, data={
        "grant_type": "client_credentials", "client_id": ACCESS_KEY_ID, "client_secret": SECRET_ACCESS_KEY,
        "scope": "catalog"})
    resp.raise_for_status()
    return resp.json()["access_token"]


def start(slot: str, binary: Path, work: Path) -> Target:
    if slot == "tb-full":
        return TablebayTarget(binary, work, "full")
    if slot == "tb-relaxed":
        return TablebayTarget(binary, work, "relaxed")
    peer, mode = {"weed-fsync": ("seaweedfs", "fsync"), "weed-default": ("seaweedfs", "default"),
                  "rest": ("iceberg-rest", None)}[slot]
    try:
        return PeerTarget(peer, work, mode)
    except RuntimeError as e:  # a fixed port taken for a moment by someone else: once more, in a clean directory
        print(f"    {slot} did not start, once more: {str(e)[-300:]}", flush=True)
        shutil.rmtree(work, ignore_errors=True)
        return PeerTarget(peer, work, mode)


# --- the cells --------------------------------------------------------------------------------------------

def get(target: Target, key: str) -> int:
    """GET one object through a presigned URL into a reused buffer; returns its size."""
    netloc = urlsplit(target.s3_url).netloc
    conn = http.client.HTTPConnection(netloc, timeout=300)
    conn.request("GET", presign("GET", netloc, f"/{target.bucket}/{key}"))
    resp = conn.getresponse()
    buf = memoryview(bytearray(MIB))
    size = 0
    while n := resp.readinto(buf):
        size += n
    conn.close()
    assert resp.status == 200, resp.status
    return size


def measure_s3(target: Target, work: Path, seconds: float) -> dict:
    out = {}
    run = run_wrk("PUT", target.s3_url, target.bucket, "put", 4 * KIB, 65536, 16, seconds, work)
    out[S3_CELLS[0]] = {"rate": run["objects"] / run["seconds"], "errors": run["errors"]}
    for i in range(256):
        put(target, target.bucket, f"get/{i}", os.urandom(4 * KIB))
    run = run_wrk("GET", target.s3_url, target.bucket, "get", 0, 256, 16, seconds, work)
    out[S3_CELLS[1]] = {"rate": run["objects"] / run["seconds"], "errors": run["errors"]}
    body = os.urandom(64 * MIB)
    puts, gets = [], []
    for i in range(4):
        t0 = time.perf_counter()
        put(target, target.bucket, f"large/{i}", body)
        puts.append(64 / (time.perf_counter() - t0))
    for i in range(4):
        t0 = time.perf_counter()
        assert get(target, f"large/{i}") == len(body)
        gets.append(64 / (time.perf_counter() - t0))
    out[S3_CELLS[2]] = {"rate": statistics.median(puts)}
    out[S3_CELLS[3]] = {"rate": statistics.median(gets)}
    return out


def measure_catalog(target: Target, seconds: float) -> dict:
    out = {}
    client = target.catalog()
    commit_snapshots(client, target.base, "t100", create_table(client, target.base, "t100"), SNAPSHOTS)
    status, body = client.request("GET", table_path(target.base, "t100"))
    assert status == 200, body[:300]
    assert len(json.loads(body)["metadata"]["snapshots"]) == SNAPSHOTS
    url = target.catalog_url + table_path(target.base, "t100")
    for clients, cell in ((1, CATALOG_CELLS[0]), (16, CATALOG_CELLS[1])):
        iceberg_catalog.run_wrk(url, target.token, clients, 1)  # warm-up
        w = iceberg_catalog.run_wrk(url, target.token, clients, seconds)
        out[cell] = {"rate": w["requests"] / max(1, int(seconds)), "p50": w["p50"] * 1000, "p99": w["p99"] * 1000,
                     "errors": w["errors"], "doc KiB": len(body) / KIB}

    create_table(client, target.base, "seq")
    commit_worker((target.catalog_url, "bearer", target.token, target.base, "seq", 0, time.time() + 60, 20))  # warm-up
    t0 = time.time()
    r = commit_worker((target.catalog_url, "bearer", target.token, target.base, "seq", t0, t0 + seconds, 10**9))
    out[CATALOG_CELLS[2]] = {"rate": r["commits"] / (time.time() - t0), "p99": percentile(r["latencies"], 0.99) * 1000,
                             "errors": r["errors"]}

    create_table(client, target.base, "contended")
    results = commit_together(target, ["contended"] * 8, seconds)
    commits = sum(r["commits"] for r in results)
    status, body = client.request("GET", table_path(target.base, "contended"))
    landed = len(json.loads(body)["metadata"].get("snapshots", []))
    out[CATALOG_CELLS[3]] = {"rate": commits / seconds, "conflicts": sum(r["conflicts"] for r in results),
                             "errors": sum(r["errors"] for r in results), "lost": commits - landed}

    names = [f"m{i}" for i in range(8)]
    for name in names:
        create_table(client, target.base, name)
    results = commit_together(target, names, seconds)
    out[CATALOG_CELLS[4]] = {"rate": sum(r["commits"] for r in results) / seconds,
                             "errors": sum(r["errors"] for r in results)}
    return out


def commit_together(target: Target, names: list[str], seconds: float) -> list[dict]:
    """One writer process per name, all committing from the same instant for `seconds`."""
    start_at = time.time() + 1.0
    results = run_parallel(commit_worker, [(target.catalog_url, "bearer", target.token, target.base, name, start_at,
                                            start_at + seconds, 10**9) for name in names])
    for r in results:
        if r["errors"]:
            print(f"    a writer saw {r['errors']} errors, last {r['last_status']}: {r['last_body'][:200]}", flush=True)
    return results


def _read_worker(args) -> tuple[int, int, float, float, int]:
    """Reads back the files one `_file_worker` wrote (benches/s3_throughput.py), until `deadline`."""
    directory, worker, deadline = args
    files = sorted(Path(directory, str(worker)).iterdir())
    done = nbytes = 0
    start = time.time()
    while time.time() < deadline:
        for path in files[:256]:
            with open(path, "rb") as f:
                nbytes += len(f.read())
            done += 1
    return done, nbytes, start, time.time(), 0


def measure_plain(work: Path, seconds: float) -> dict[str, dict]:
    """Both plain columns: 16 Python writers of new 4 KiB files (with and without fsync of each file), 16 readers
    of them, and the disk reference of benches/durability.py (64 MiB files, 4 KiB append + fdatasync)."""
    columns: dict[str, dict] = {"plain-fsync": {}, "plain": {}}
    for column, mode in (("plain-fsync", "fsync"), ("plain", "none")):
        d = work / f"files-{mode}"
        deadline = time.time() + seconds
        run = run_processes(_file_worker, [(mode, str(d), w, 4 * KIB, 10**7, deadline) for w in range(16)])
        columns[column][S3_CELLS[0]] = {"rate": run["objects"] / run["seconds"]}
        deadline = time.time() + seconds
        run = run_processes(_read_worker, [(str(d), w, deadline) for w in range(16)])
        columns[column][S3_CELLS[1]] = {"rate": run["objects"] / run["seconds"]}
        shutil.rmtree(d)
    disk = disk_reference(work / "disk", seconds)
    columns["plain-fsync"][S3_CELLS[2]] = {"rate": disk["64 MiB file + fsync MiB/s"]}
    columns["plain"][S3_CELLS[2]] = {"rate": disk["64 MiB file, no sync MiB/s"]}
    big = work / "big"
    big.write_bytes(os.urandom(64 * MIB))
    reads = []
    buf = memoryview(bytearray(MIB))
    for _ in range(4):
        t0 = time.perf_counter()
        with open(big, "rb", buffering=0) as f:
            while f.readinto(buf):
                pass
        reads.append(64 / (time.perf_counter() - t0))
    big.unlink()
    for column in columns.values():
        column[S3_CELLS[3]] = {"rate": statistics.median(reads)}
    columns["plain-fsync"][DISK_CELLS[0]] = {"rate": disk["4 KiB append + fdatasync /s"]}
    columns["plain-fsync"][DISK_CELLS[1]] = {"rate": disk["new 4 KiB file + fdatasync + dir fsync /s"]}
    return columns


def run_slot(slot: str, binary: Path, work: Path, seconds: float) -> dict[str, dict]:
    """One column (two for `plain`) of one round, on a fresh server and data directory."""
    work.mkdir(parents=True, exist_ok=True)
    try:
        if slot == "plain":
            return measure_plain(work, seconds)
        target = start(slot, binary, work)
        try:
            cells = measure_s3(target, work, seconds) if target.s3_url else {}
            cells.update(measure_catalog(target, seconds))
        finally:
            target.stop()
        return {slot: cells}
    finally:
        shutil.rmtree(work, ignore_errors=True)


# --- syncs per operation ----------------------------------------------------------------------------------

SYNC_CALLS = ("fsync", "fdatasync", "sync_file_range", "syncfs")


def sync_calls(trace: Path) -> int:
    """The sync calls in an `strace -c` summary."""
    text = trace.read_text() if trace.exists() else ""
    return sum(int(m.group(1)) for m in re.finditer(r"^\s*[\d.]+\s+[\d.]+\s+\d+\s+(\d+)\s+(?:\d+\s+)?(\w+)\s*$",
                                                    text, re.M) if m.group(2) in SYNC_CALLS)


def traced(pid: int, work: Path, action) -> tuple[int, float]:
    """Sync calls of process `pid` (all its threads) while `action()` runs, and the seconds strace was attached."""
    trace = work / f"strace-{time.monotonic_ns()}.txt"
    strace = subprocess.Popen(["strace", "-f", "-qq", "-c", "-e", "trace=" + ",".join(SYNC_CALLS), "-o", str(trace),
                               "-p", str(pid)], stderr=subprocess.DEVNULL)
    t0 = time.monotonic()
    time.sleep(1.0)  # attaching to every thread takes a moment
    action()
    time.sleep(0.5)
    strace.send_signal(signal.SIGINT)
    strace.wait(timeout=60)
    return sync_calls(trace), time.monotonic() - t0


def peer_syncs(target: Target, work: Path, op: str, n: int) -> float:
    """Sync calls per operation of a running peer: `n` operations under strace, minus the same time idle."""
    client = target.catalog()
    if op == "commit":
        create_table(client, target.base, "sync")
        status, body = client.request("GET", table_path(target.base, "sync"))
        state = {"metadata": json.loads(body)["metadata"]}

        def action(count=n):
            state["metadata"] = commit_snapshots(client, target.base, "sync", state["metadata"], count)
    else:
        size = 4 * KIB if op == "PUT 4 KiB" else 64 * MIB
        body = os.urandom(size)
        state = {"i": 0}

        def action(count=n):
            for _ in range(count):
                put(target, target.bucket, f"sync/{state['i']}", body)
                state["i"] += 1
    action(max(2, n // 10))  # warm-up: volume growth, first table writes
    idle, idle_seconds = traced(target.pid, work, lambda: time.sleep(2.0))
    calls, seconds = traced(target.pid, work, action)
    return (calls - idle * seconds / idle_seconds) / n


SYNC_PLAN = {"PUT 4 KiB": 200, "PUT 64 MiB": 4, "commit": 100}


def syncs_per_operation(binary: Path, work: Path, slots: list[str]) -> dict[str, dict[str, float]]:
    out: dict[str, dict[str, float]] = {}
    for slot in slots:
        if slot == "plain":
            continue
        out[slot] = {}
        if slot.startswith("tb-"):
            mode = slot.removeprefix("tb-")
            for op, n in SYNC_PLAN.items():
                base = count_syncs(binary, work, mode, op, 0)
                out[slot][op] = (count_syncs(binary, work, mode, op, n) - base) / n
            continue
        target = start(slot, binary, work / f"sync-{slot}")
        try:
            for op, n in SYNC_PLAN.items():
                if op.startswith("PUT") and not target.s3_url:
                    continue
                out[slot][op] = peer_syncs(target, work, op, n)
        finally:
            target.stop()
            shutil.rmtree(work / f"sync-{slot}", ignore_errors=True)
    return out


# --- the report -------------------------------------------------------------------------------------------

def fmt(n: float) -> str:
    return f"{n:,.0f}" if n >= 100 else f"{n:,.1f}"


def cell_text(cell: str, values: list[dict]) -> str:
    """The median of each figure over the rounds."""
    if not values:
        return "—"
    med = {k: statistics.median(v[k] for v in values) for k in values[0] if isinstance(values[0][k], (int, float))}
    text = fmt(med["rate"])
    if "p50" in med:
        text += f" ({med['p50']:.2f} / {med['p99']:.2f})"
    elif "p99" in med:
        text += f" ({med['p99']:.1f})"
    if "conflicts" in med:
        text += f"; {med['conflicts']:.0f}"
    bad = [f"{k} {med[k]:.0f}" for k in ("errors", "lost") if med.get(k)]
    if bad:
        text += " [" + ", ".join(bad) + "]"
    return text


def print_report(columns: list[str], rounds: dict[str, list[dict]], syncs: dict, args, loads: list[float]) -> None:
    cells = S3_CELLS + CATALOG_CELLS + DISK_CELLS
    print(f"\nMedians of {args.rounds} rounds, {args.seconds:.0f} s per timed cell, columns in alternating order; "
          f"{os.cpu_count()} CPUs; 1-min load average during the rounds: median {statistics.median(loads):.1f}, "
          f"{min(loads):.1f}–{max(loads):.1f}\n")
    print("| cell | " + " | ".join(COLUMNS[c] for c in columns) + " |")
    print("|---|" + "---|" * len(columns))
    for cell in cells:
        row = [cell_text(cell, [r[cell] for r in rounds[c] if cell in r]) for c in columns]
        if all(x == "—" for x in row):
            continue
        print(f"| {cell} | " + " | ".join(row) + " |")
    docs = {c: statistics.median(r[CATALOG_CELLS[0]]["doc KiB"] for r in rounds[c])
            for c in columns if rounds[c] and CATALOG_CELLS[0] in rounds[c][0]}
    if docs:
        print("\nloadTable document (100 snapshots): " + ", ".join(f"{COLUMNS[c]} {v:.1f} KiB" for c, v in docs.items()))
    print("\nSpread of the rates over the rounds (min–max):")
    for cell in cells:
        spread = []
        for c in columns:
            rates = [r[cell]["rate"] for r in rounds[c] if cell in r]
            if rates:
                spread.append(f"{c} {fmt(min(rates))}–{fmt(max(rates))}")
        if spread:
            print(f"  {cell}: " + ", ".join(spread))
    if syncs:
        ops = list(SYNC_PLAN)
        print("\nSync calls per operation (strace -f -c: fsync + fdatasync + sync_file_range + syncfs)\n")
        print("| operation | " + " | ".join(COLUMNS[c] for c in syncs) + " |")
        print("|---|" + "---|" * len(syncs))
        for op in ops:
            print(f"| {op} | " + " | ".join(f"{syncs[c][op]:.2f}" if op in syncs[c] else "—" for c in syncs) + " |")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    target_dir = os.environ.get("CARGO_TARGET_DIR") or str(Path.home() / ".cache" / "tablebay-target")
    parser.add_argument("--binary", type=Path, default=Path(f"{target_dir}/release/tablebay"))
    parser.add_argument("--workdir", type=Path, default=Path.home() / ".cache" / "tablebay-bench")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--columns", default=",".join(SLOTS),
                        help="comma-separated slots among " + ", ".join(SLOTS) + " (plain = both plain columns)")
    parser.add_argument("--no-syncs", action="store_true", help="skip the strace counts")
    parser.add_argument("--json", type=Path, help="also save every round's figures")
    args = parser.parse_args()
    slots = [s for s in args.columns.split(",") if s]
    unknown = [s for s in slots if s not in SLOTS]
    if unknown:
        parser.error(f"unknown columns {unknown}: choose among {SLOTS}")
    if any(s.startswith("tb-") for s in slots) and not args.binary.is_file():
        print(f"no binary at {args.binary}: cargo build --release -p tablebay", file=sys.stderr)
        return 2
    for tool in ["wrk"] + ([] if args.no_syncs else ["strace"]):
        if not shutil.which(tool):
            print(f"{tool} is missing (apt-get install {tool})", file=sys.stderr)
            return 2
    # The harness would otherwise check (and build) this tree's debug binary; the benchmark runs the one named.
    os.environ.update(TABLEBAY_BIN=str(args.binary), TABLEBAY_BIN_UNCHECKED="1")
    if any(not s.startswith("tb-") and s != "plain" for s in slots):
        subprocess.run([str(PEERS_SH), "install"], check=True, stdout=subprocess.DEVNULL)
    args.workdir.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="peers-", dir=args.workdir))
    columns = [c for c in COLUMNS if c in slots or (c.startswith("plain") and "plain" in slots)]
    rounds: dict[str, list[dict]] = {c: [] for c in columns}
    loads: list[float] = []
    syncs: dict = {}
    try:
        if not args.no_syncs:
            print("counting sync calls per operation under strace …", flush=True)
            syncs = syncs_per_operation(args.binary, work, slots)
            for slot, ops in syncs.items():
                print(f"  {slot}: " + ", ".join(f"{op} {v:.2f}" for op, v in ops.items()), flush=True)
        for r in range(args.rounds):
            order = slots if r % 2 == 0 else list(reversed(slots))
            for slot in order:
                loads.append(os.getloadavg()[0])
                t0 = time.time()
                result = run_slot(slot, args.binary, work / f"r{r}-{slot}", args.seconds)
                loads.append(os.getloadavg()[0])
                for column, cells in result.items():
                    rounds[column].append(cells)
                    print(f"round {r + 1} {column} ({time.time() - t0:.0f} s, load {loads[-1]:.1f}): "
                          + "; ".join(f"{cell.split(' (')[0]} {fmt(v['rate'])}" for cell, v in cells.items()),
                          flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    if args.json:
        args.json.write_text(json.dumps({"rounds": rounds, "syncs": syncs, "loads": loads}, indent=1))
    print_report(columns, rounds, syncs, args, loads or [os.getloadavg()[0]])
    return 0


if __name__ == "__main__":
    sys.exit(main())
