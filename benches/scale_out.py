#!/usr/bin/env python3
"""Scale-out benchmark (issue 17, item 6): loadTable/s and commits/s through HAProxy with 1 and with 3 Tablebay
instances on PostgreSQL, with the local-disk blob store and with SeaweedFS as the S3 blob store, side by side in
one run. Each cell starts its own deployment with the chaos test's harness (clients/python/tablebay_test/
cluster.py: scripts/postgres.sh, scripts/seaweedfs.sh, scripts/haproxy.sh), measures, and tears it down; the
cells run in alternating order over `--rounds` rounds and the table shows medians. It is never part of the tests.

    ~/.cache/tablebay-venv/bin/python benches/scale_out.py [--bin PATH] [--rounds 3] [--seconds 8]

- loadTable: wrk (C, one thread, 16 keep-alive connections, bearer token) on `GET /iceberg/v1/…/tables/t` of a
  table with 20 snapshots, through the balancer.
- commits: 8 writer processes, each committing to a table of its own (so they never conflict; contention is
  iceberg_catalog.py's subject) the catalog part of an append, through the balancer, for `--seconds`.

Besides the rates it prints where the CPU went over each measurement, from /proc: the Tablebay instances
(summed), PostgreSQL (postmaster and backends), SeaweedFS, HAProxy, the load generator, and whatever else ran on
the machine meanwhile. On 2 cores, more instances
cannot add CPU; what the table shows is the overhead of the balancer hop and of the S3 store.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "clients" / "python"))
sys.path.insert(0, str(ROOT / "benches"))

import iceberg_catalog as ic  # noqa: E402

from tablebay_test.clients import make_client  # noqa: E402
from tablebay_test.cluster import Cluster  # noqa: E402

TICKS = os.sysconf("SC_CLK_TCK")


def proc_cpu(pid: int) -> float:
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / TICKS


def machine_busy() -> float:
    """CPU seconds the whole machine spent not idle."""
    values = [int(v) for v in Path("/proc/stat").read_text().splitlines()[0].split()[1:]]
    idle = values[3] + values[4]
    return (sum(values[:8]) - idle) / TICKS


def children(pid: int) -> list[int]:
    out = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1]) == pid:
                    out.append(int(entry.name))
            except (OSError, ValueError, IndexError):
                continue
    return out


def pid_in(path: Path) -> int | None:
    try:
        return int(path.read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return None


class Meter:
    """CPU seconds over a measurement: the instances, PostgreSQL (postmaster and its backends), SeaweedFS,
    HAProxy, this process, and the whole machine (the rest is other work on the machine)."""

    def __init__(self, cluster: Cluster):
        self.cluster = cluster

    def groups(self) -> dict[str, list[int]]:
        work = self.cluster.workdir
        postmaster = pid_in(work / "pg" / "data" / "postmaster.pid")
        weed, haproxy = pid_in(work / "weed" / "weed.pid"), pid_in(work / "haproxy" / "haproxy.pid")
        return {
            "tablebay": [i.pid for i in self.cluster.instances if i.pid],
            "postgres": [postmaster, *children(postmaster)] if postmaster else [],
            "weed": [weed] if weed else [],
            "haproxy": [haproxy] if haproxy else [],
        }

    def sample(self) -> dict[str, float]:
        return {name: sum(proc_cpu(p) for p in pids) for name, pids in self.groups().items()}

    def __enter__(self):
        self.t0 = time.monotonic()
        self.before = self.sample()
        self.all0 = machine_busy()
        return self

    def __exit__(self, *exc):
        self.wall = time.monotonic() - self.t0
        # Backends that exited meanwhile are not counted; the pool keeps its connections, so few do.
        after = self.sample()
        self.cpu = {name: after[name] - self.before.get(name, 0.0) for name in after}
        self.total = machine_busy() - self.all0


CPU_PARTS = ("tablebay", "postgres", "weed", "haproxy", "client", "other")


def cpu_split(meter: Meter, client: float) -> dict[str, float]:
    """CPU seconds per part; `other` is whatever else ran on the machine meanwhile."""
    split = dict(meter.cpu, client=client)
    split["other"] = max(0.0, meter.total - sum(split.values()))
    return split


def measure(workdir: Path, instances: int, backend: str, seconds: float) -> dict:
    cluster = Cluster(workdir, instances=instances, backend=backend)
    try:
        cluster.start()
        tables = make_client(cluster.tables_url)
        warehouse = tables.create_table_bucket(name="bench")["arn"]
        token = ic.get_token(cluster.tables_url)
        client = ic.Client(cluster.tables_url, "bearer", token)
        prefix = ic.setup_catalog(client, warehouse)
        metadata = ic.create_table(client, prefix, "t")
        ic.commit_snapshots(client, prefix, "t", metadata, 20)
        for w in range(8):
            ic.create_table(client, prefix, f"w{w}")

        url = cluster.tables_url + ic.table_path(prefix, "t")
        ic.run_wrk(url, token, 16, 1)  # warm-up: connections and caches on every instance
        with Meter(cluster) as load_cpu:
            load = ic.run_wrk(url, token, 16, seconds)
        start_at = time.time() + 1.0
        stop_at = start_at + seconds
        jobs = [(cluster.tables_url, "bearer", token, prefix, f"w{w}", start_at, stop_at, 10 ** 9)
                for w in range(8)]
        with Meter(cluster) as commit_cpu:
            results = ic.run_parallel(ic.commit_worker, jobs)
        commits = sum(r["commits"] for r in results)
        errors = sum(r["errors"] for r in results)
        latencies = [x for r in results for x in r["latencies"]]
        writers_cpu = sum(r["cpu"] for r in results)
        return {
            "loads/s": load["requests"] / seconds, "load p50 ms": load["p50"] * 1000,
            "load errors": load["errors"], "load cpu": cpu_split(load_cpu, load["cpu"]),
            "commits/s": commits / seconds, "commit p50 ms": ic.percentile(latencies, 0.5) * 1000,
            "commit errors": errors, "commit cpu": cpu_split(commit_cpu, writers_cpu),
        }
    finally:
        cluster.stop()
        cluster.remove()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--bin", help="the tablebay binary (default: TABLEBAY_BIN, else the release build if "
                                      "there is one, else the debug build)")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seconds", type=float, default=8)
    parser.add_argument("--backends", default="local,weed")
    parser.add_argument("--instances", default="1,3")
    parser.add_argument("--workdir", default=str(Path.home() / ".cache" / "tablebay-bench-scale"))
    args = parser.parse_args()

    target = Path(os.environ.get("CARGO_TARGET_DIR", Path.home() / ".cache" / "tablebay-target"))
    binary = args.bin or os.environ.get("TABLEBAY_BIN") or next(
        (str(p) for p in (target / "release" / "tablebay", target / "debug" / "tablebay") if p.exists()), "")
    if not binary:
        print("no tablebay binary: build one or pass --bin", file=sys.stderr)
        return 2
    os.environ["TABLEBAY_BIN"] = binary
    print(f"binary: {binary}")
    cells = [(n, b) for b in args.backends.split(",") for n in (int(x) for x in args.instances.split(","))]
    results: dict[tuple[int, str], list[dict]] = {cell: [] for cell in cells}
    for r in range(args.rounds):
        order = cells if r % 2 == 0 else list(reversed(cells))
        for n, backend in order:
            workdir = Path(args.workdir) / f"r{r}-{backend}-{n}"
            shutil.rmtree(workdir, ignore_errors=True)
            out = measure(workdir, n, backend, args.seconds)
            results[(n, backend)].append(out)
            print(f"round {r + 1}: {n} instance(s), {backend}: {out['loads/s']:.0f} loads/s, "
                  f"{out['commits/s']:.1f} commits/s (errors {out['load errors']}/{out['commit errors']})",
                  flush=True)

    def med(cell, key, index=None):
        values = [x[key] if index is None else x[key][index] for x in results[cell]]
        return statistics.median(values)

    print(f"\nmedians of {args.rounds} round(s), {args.seconds:.0f} s per measurement, through HAProxy; CPU seconds "
          f"over the measurement: {' / '.join(CPU_PARTS)} (client: wrk or the 8 writers; other: the rest of the machine)")
    print("| blob store | instances | loadTable/s | p50 ms | CPU s | commits/s | p50 ms | CPU s |")
    print("|---|---|---|---|---|---|---|---|")
    for n, backend in cells:
        c = (n, backend)
        load_cpu = " / ".join(f"{med(c, 'load cpu', part):.1f}" for part in CPU_PARTS)
        commit_cpu = " / ".join(f"{med(c, 'commit cpu', part):.1f}" for part in CPU_PARTS)
        print(f"| {backend} | {n} | {med(c, 'loads/s'):.0f} | {med(c, 'load p50 ms'):.1f} | {load_cpu} | "
              f"{med(c, 'commits/s'):.1f} | {med(c, 'commit p50 ms'):.1f} | {commit_cpu} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
