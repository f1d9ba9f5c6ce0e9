#!/usr/bin/env python3
"""Benchmark of durable writes (issue 22): what `--durability full` (the default) costs beside `relaxed`, and
how close both come to the disk. It is never part of the tests.

    cargo build --release -p tablebay
    ~/.cache/tablebay-venv/bin/python benches/durability.py [--binary PATH] [--rounds 3] [--seconds 5]
    ~/.cache/tablebay-venv/bin/python benches/durability.py --fsyncs-only     # only the strace counts

Three parts, in one run, on the disk of `--workdir` (default `~/.cache/tablebay-bench`, the disk a real data
directory would use; never tmpfs):

1. **The disk itself**, in Python: 4 KiB `write` + `fdatasync` appends to one file (the disk's sync rate), new
   4 KiB files with `fdatasync` + a directory `fsync` (what a durable new blob costs), and a 64 MiB file written
   and synced (a plain copy with fsync), beside the same without syncs.
2. **Syncs per operation**, counted with `strace -f -c -e trace=fsync,fdatasync,sync_file_range,syncfs` on the
   server: `N` operations of each kind against a fresh server, minus a run with none (start-up and shutdown),
   divided by `N`. Kinds: 4 KiB PUT (one at a time, and 16 at once: shared syncs show as fewer per PUT), 64 MiB PUT, a multipart upload of 3 × 8 MiB parts (3 UploadPart + 1
   Complete, counted per upload), and an Iceberg REST commit (add-snapshot).
3. **Throughput**, both modes alternating (full, relaxed; relaxed, full; …) with a fresh server and data dir per
   round; medians:
   - 4 KiB PUT with 16 connections (wrk, presigned URLs to new keys), objects/s and p99; 4 KiB GET of 256 of them;
   - 64 MiB PUT, one stream (Python `http.client`, presigned), MiB/s and the server's CPU seconds per GiB;
   - sequential commits from one client (bearer token, add-snapshot): 200 on a fresh table, commits/s and p99;
   - 8 clients committing to 8 different tables, aggregate commits/s.

On a shared machine single rounds swing widely: read a difference within the spread of the rounds as noise.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from urllib.parse import urlsplit

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "clients" / "python"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from iceberg_catalog import (BenchServer, Client, append_commit, commit_worker, create_table,  # noqa: E402
                             get_token, percentile, run_parallel, setup_catalog, table_path)
import s3_throughput  # noqa: E402
from s3_throughput import presign, run_wrk  # noqa: E402
from tablebay_test import ACCESS_KEY_ID, SECRET_ACCESS_KEY  # noqa: E402
from tablebay_test.clients import make_client  # noqa: E402

# The presigned URLs are signed with the test harness's root credentials, which the server here is started with.
s3_throughput.ACCESS_KEY, s3_throughput.SECRET_KEY = ACCESS_KEY_ID, SECRET_ACCESS_KEY

KIB, MIB = 1024, 1024 * 1024
MODES = ["full", "relaxed"]


# --- the disk ------------------------------------------------------------------------------------------

def disk_reference(work: Path, seconds: float) -> dict:
    work.mkdir(parents=True, exist_ok=True)
    block = os.urandom(4 * KIB)
    out = {}
    path = work / "append"
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
    n, t0 = 0, time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        os.write(fd, block)
        os.fdatasync(fd)
        n += 1
    out["4 KiB append + fdatasync /s"] = n / (time.perf_counter() - t0)
    os.close(fd)
    path.unlink()
    files = work / "files"
    files.mkdir(exist_ok=True)
    for run, (label, sync) in enumerate((("new 4 KiB file, no sync /s", False),
                                         ("new 4 KiB file + fdatasync + dir fsync /s", True))):
        n, t0 = 0, time.perf_counter()
        while time.perf_counter() - t0 < seconds:
            fd = os.open(files / f"{run}-{n}", os.O_WRONLY | os.O_CREAT | os.O_EXCL)
            os.write(fd, block)
            if sync:
                os.fdatasync(fd)
                dfd = os.open(files, os.O_RDONLY)
                os.fsync(dfd)
                os.close(dfd)
            os.close(fd)
            n += 1
        out[label] = n / (time.perf_counter() - t0)
    shutil.rmtree(files)
    chunk = os.urandom(8 * MIB)
    for label, sync in (("64 MiB file, no sync MiB/s", False), ("64 MiB file + fsync MiB/s", True)):
        rates = []
        for i in range(3):
            t0 = time.perf_counter()
            with open(work / f"big{i}", "wb") as f:
                for _ in range(8):
                    f.write(chunk)
                if sync:
                    f.flush()
                    os.fsync(f.fileno())
            rates.append(64 / (time.perf_counter() - t0))
            (work / f"big{i}").unlink()
        out[label] = statistics.median(rates)
    return out


# --- a server ------------------------------------------------------------------------------------------

class DurabilityServer(BenchServer):
    def __init__(self, workdir: Path, binary: Path, durability: str, wrap: list[str] | None = None):
        super().__init__(workdir, binary, "warn")
        self.extra_args = ("--durability", durability)
        self.wrap = wrap or []

    def command(self) -> list[str]:
        return self.wrap + super().command()

    def stop(self, timeout: float = 30.0) -> None:
        """Under strace, the server (strace's child) gets the SIGTERM: strace itself would only detach."""
        if self.wrap and self._proc is not None and self._proc.poll() is None:
            children = subprocess.run(["pgrep", "-P", str(self._proc.pid)], capture_output=True, text=True)
            for pid in children.stdout.split():
                os.kill(int(pid), 15)
            self._proc.wait(timeout=timeout)
        super().stop(timeout)


class Setup:
    """A table bucket, an Iceberg namespace and tables, and the storage bucket of one table."""

    def __init__(self, server: BenchServer, tables: int = 1):
        warehouse = make_client(server.tables_url).create_table_bucket(name="bench")["arn"]
        self.token = get_token(server.tables_url)
        self.client = Client(server.tables_url, "bearer", self.token)
        self.prefix = setup_catalog(self.client, warehouse)
        self.names = [f"t{i}" for i in range(tables)]
        metadata = [create_table(self.client, self.prefix, name) for name in self.names]
        self.bucket = urlsplit(metadata[0]["location"]).netloc
        self.server = server

    def commit(self, count: int, name: str = "t0") -> list[float]:
        status, body = self.client.request("GET", table_path(self.prefix, name))
        metadata = json.loads(body)["metadata"]
        latencies = []
        for _ in range(count):
            t0 = time.perf_counter()
            status, body = self.client.request("POST", table_path(self.prefix, name), append_commit(metadata, name))
            assert status == 200, (status, body[:300])
            latencies.append(time.perf_counter() - t0)
            metadata = json.loads(body)["metadata"]
        return latencies


def s3_request(server: BenchServer, method: str, path: str, body: bytes = b"") -> tuple[int, bytes]:
    parts = urlsplit(server.s3_url)
    url = presign(method, parts.netloc, path)
    target = url[len(server.s3_url):] if url.startswith(server.s3_url) else url
    conn = http.client.HTTPConnection(parts.netloc, timeout=300)
    conn.request(method, target, body=body)
    resp = conn.getresponse()
    data = resp.read()
    conn.close()
    return resp.status, data


def put(server, bucket: str, key: str, body: bytes) -> None:
    status, data = s3_request(server, "PUT", f"/{bucket}/{key}", body)
    assert status == 200, (status, data[:300])


def multipart(server, bucket: str, key: str, parts: list[bytes]) -> None:
    """A multipart upload through boto3 (the sync count does not depend on the client)."""
    from tablebay_test.s3 import make_s3_client

    s3 = make_s3_client(server.s3_url)
    upload = s3.create_multipart_upload(Bucket=bucket, Key=key)["UploadId"]
    etags = [s3.upload_part(Bucket=bucket, Key=key, UploadId=upload, PartNumber=n, Body=part)["ETag"]
             for n, part in enumerate(parts, 1)]
    s3.complete_multipart_upload(Bucket=bucket, Key=key, UploadId=upload, MultipartUpload={
        "Parts": [{"PartNumber": n, "ETag": e} for n, e in enumerate(etags, 1)]})


# --- syncs per operation -------------------------------------------------------------------------------

SYNC_CALLS = ("fsync", "fdatasync", "sync_file_range", "syncfs")


def count_syncs(binary: Path, work: Path, durability: str, op: str, n: int) -> int:
    """Sync calls of one server run doing `n` operations `op` (after its setup), start-up and shutdown included."""
    trace = work / f"strace-{durability}-{op}-{n}.txt"
    wrap = ["strace", "-f", "-qq", "-c", "-e", "trace=" + ",".join(SYNC_CALLS), "-o", str(trace)]
    server = DurabilityServer(work / f"sync-{durability}-{op}-{n}", binary, durability, wrap)
    server.start()
    try:
        setup = Setup(server)
        if op == "commit":
            setup.commit(n)
        elif op == "PUT 4 KiB":
            for i in range(n):
                put(server, setup.bucket, f"small/{i}", os.urandom(4 * KIB))
        elif op == "PUT 4 KiB, 16 at once":
            from concurrent.futures import ThreadPoolExecutor
            with ThreadPoolExecutor(16) as pool:
                list(pool.map(lambda i: put(server, setup.bucket, f"small/{i}", os.urandom(4 * KIB)), range(n)))
        elif op == "PUT 64 MiB":
            body = os.urandom(64 * MIB)
            for i in range(n):
                put(server, setup.bucket, f"large/{i}", body)
        elif op == "multipart 3 × 8 MiB":
            parts = [os.urandom(8 * MIB) for _ in range(3)]
            for i in range(n):
                multipart(server, setup.bucket, f"mp/{i}", parts)
    finally:
        server.stop(timeout=30)
    text = trace.read_text()
    shutil.rmtree(server.workdir, ignore_errors=True)
    return sum(int(m.group(1)) for m in re.finditer(r"^\s*[\d.]+\s+[\d.]+\s+\d+\s+(\d+)\s+(?:\d+\s+)?(\w+)\s*$",
                                                       text, re.M) if m.group(2) in SYNC_CALLS) \
        if text else 0


def syncs_per_operation(binary: Path, work: Path) -> list[tuple[str, str, float]]:
    rows = []
    plan = {"PUT 4 KiB": 200, "PUT 4 KiB, 16 at once": 400, "PUT 64 MiB": 4, "multipart 3 × 8 MiB": 4, "commit": 200}
    if os.environ.get("BENCH_SYNC_OPS"):  # a subset, e.g. BENCH_SYNC_OPS=commit
        plan = {op: n for op, n in plan.items() if op in os.environ["BENCH_SYNC_OPS"].split(",")}
    for durability in MODES:
        for op, n in plan.items():
            base = count_syncs(binary, work, durability, op, 0)
            total = count_syncs(binary, work, durability, op, n)
            rows.append((durability, op, (total - base) / n))
    return rows


# --- throughput ----------------------------------------------------------------------------------------

def one_round(binary: Path, work: Path, durability: str, seconds: float) -> dict:
    server = DurabilityServer(work / f"round-{durability}", binary, durability)
    server.start()
    out = {}
    try:
        setup = Setup(server, tables=8)
        put_run = run_wrk("PUT", server.s3_url, setup.bucket, "put", 4 * KIB, 65536, 16, seconds, work)
        out["4 KiB PUT, 16 conns (objects/s)"] = put_run["objects"] / put_run["seconds"]
        for i in range(256):
            put(server, setup.bucket, f"get/{i}", os.urandom(4 * KIB))
        get_run = run_wrk("GET", server.s3_url, setup.bucket, "get", 0, 256, 16, seconds, work)
        out["4 KiB GET, 16 conns (objects/s)"] = get_run["objects"] / get_run["seconds"]
        body = os.urandom(64 * MIB)
        rates, cpu = [], []
        for i in range(4):
            cpu0, t0 = server.cpu_seconds(), time.perf_counter()
            put(server, setup.bucket, f"large/{i}", body)
            elapsed = time.perf_counter() - t0
            rates.append(64 / elapsed)
            cpu.append((server.cpu_seconds() - cpu0) / (64 / 1024))
        out["64 MiB PUT, 1 stream (MiB/s)"] = statistics.median(rates)
        out["64 MiB PUT: server CPU s per GiB"] = statistics.median(cpu)
        # 200 commits on a fresh table, as benches/iceberg_catalog.py does: a table growing for the whole cell would
        # measure its metadata's size (every commit rewrites the whole document) more than the commit itself.
        create_table(setup.client, setup.prefix, "seq")
        t0 = time.perf_counter()
        lat = setup.commit(200, "seq")
        out["sequential commits (commits/s)"] = len(lat) / (time.perf_counter() - t0)
        out["sequential commits p99 (ms)"] = percentile(lat, 0.99) * 1000
        start_at = time.time() + 0.5
        stop_at = start_at + seconds
        results = run_parallel(commit_worker, [(server.tables_url, "bearer", setup.token, setup.prefix, name,
                                                start_at, stop_at, 10**9) for name in setup.names])
        out["8 clients, 8 tables (commits/s)"] = sum(r["commits"] for r in results) / seconds
    finally:
        server.stop(timeout=30)
        shutil.rmtree(server.workdir, ignore_errors=True)
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    target = os.environ.get("CARGO_TARGET_DIR") or str(Path.home() / ".cache" / "tablebay-target")
    parser.add_argument("--binary", type=Path, default=Path(f"{target}/release/tablebay"))
    parser.add_argument("--workdir", type=Path, default=Path.home() / ".cache" / "tablebay-bench")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--fsyncs-only", action="store_true")
    parser.add_argument("--no-fsyncs", action="store_true", help="skip the strace counts")
    args = parser.parse_args()
    if not args.binary.is_file():
        print(f"no binary at {args.binary}: cargo build --release -p tablebay", file=sys.stderr)
        return 2
    # The harness would otherwise check (and build) this tree's debug binary; the benchmark runs the one named.
    os.environ.update(TABLEBAY_BIN=str(args.binary), TABLEBAY_BIN_UNCHECKED="1")
    args.workdir.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="durability-", dir=args.workdir))
    try:
        if args.no_fsyncs:
            pass
        elif shutil.which("strace"):
            print("\nSync calls per operation (strace -f -c; fsync + fdatasync + sync_file_range + syncfs)")
            print(f"{'durability':<10} {'operation':<22} {'syncs/op':>9}")
            for durability, op, per_op in syncs_per_operation(args.binary, work):
                print(f"{durability:<10} {op:<22} {per_op:>9.2f}")
        else:
            print("strace is missing: no sync counts (apt-get install strace)")
        if args.fsyncs_only:
            return 0
        print("\nThe disk (Python, same filesystem)")
        for label, value in disk_reference(work / "disk", args.seconds).items():
            print(f"  {label:<45} {value:>10.0f}")
        rounds = {mode: [] for mode in MODES}
        for r in range(args.rounds):
            order = MODES if r % 2 == 0 else list(reversed(MODES))
            for mode in order:
                rounds[mode].append(one_round(args.binary, work, mode, args.seconds))
                print(f"round {r + 1} {mode}: " + ", ".join(f"{v:.0f}" for v in rounds[mode][-1].values()),
                      flush=True)
        cells = list(rounds["full"][0])
        print(f"\nMedians of {args.rounds} alternating rounds ({args.seconds:.0f} s per cell)")
        print(f"{'cell':<40} {'full':>10} {'relaxed':>10} {'full/relaxed':>13} {'full: min–max':>16}")
        for cell in cells:
            full = [r[cell] for r in rounds["full"]]
            relaxed = [r[cell] for r in rounds["relaxed"]]
            f, x = statistics.median(full), statistics.median(relaxed)
            print(f"{cell:<40} {f:>10.1f} {x:>10.1f} {f / x if x else float('nan'):>13.2f} "
                  f"{min(full):>7.0f}–{max(full):<7.0f}")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
