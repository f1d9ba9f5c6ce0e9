#!/usr/bin/env python3
"""Compaction throughput: Tablebay's engine beside Spark's `rewrite_data_files` on identical tables, and a
DuckDB / PyIceberg full scan before and after compaction (issue 6).

    ~/.cache/tablebay-venv/bin/python benches/compaction.py            # 1,000 files of ~1 MiB per table
    ~/.cache/tablebay-venv/bin/python benches/compaction.py --files 200 --no-spark

Needs the client venv (scripts/python-env.sh: pyiceberg, pyarrow, duckdb, boto3) and the release binary
(`cargo build --release -p tablebay`; `--bin` to pick another). Spark runs through
clients/jvm/spark/run-sql.sh (Spark 3.5 local mode, Iceberg 1.10.1; `--spark-master`, default local[2]).

One run: starts `tablebay serve` (release) on ephemeral ports with a fresh data dir; writes the same data into
two unpartitioned tables through PyIceberg (one commit, `write.target-file-size-bytes` = the file size, so
PyIceberg cuts it into that many files); times a DuckDB and a PyIceberg full scan of table A; compacts table A
with `tablebay compact` and table B with `CALL system.rewrite_data_files` at the same target size; times the
scans of table A again; prints one table. Throughput is MB of input per second of wall time, and per CPU
second (the compacting process's CPU time: `tablebay compact`, or the whole Spark JVM *minus the time before
the CALL started*, measured from /proc). Tablebay's engine reads the stores directly; Spark reads and writes
every byte over the S3 data plane of the same server, whose CPU time is added to Spark's.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "clients" / "python"))

import pyarrow as pa  # noqa: E402
import pyarrow.compute as pc  # noqa: E402
from pyiceberg.schema import Schema  # noqa: E402
from pyiceberg.types import DoubleType, LongType, NestedField, StringType  # noqa: E402

from tablebay_test import ACCESS_KEY_ID, REGION, SECRET_ACCESS_KEY  # noqa: E402
from tablebay_test.clients import make_client  # noqa: E402
from tablebay_test.iceberg import catalog_uri, duckdb_attach, duckdb_connect, rest_catalog  # noqa: E402
from tablebay_test.server import TablebayServer  # noqa: E402

MIB = 1024 * 1024
SCHEMA = Schema(
    NestedField(1, "id", LongType(), required=False),
    NestedField(2, "x", DoubleType(), required=False),
    NestedField(3, "y", DoubleType(), required=False),
    NestedField(4, "tag", StringType(), required=False),
)
CLK = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid: int) -> float:
    """User + system CPU of a process and its reaped children (/proc/<pid>/stat)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return sum(int(v) for v in fields[11:15]) / CLK


def data(rows: int, seed: int) -> pa.Table:
    """Mostly random doubles, so Parquet does not shrink them much and files stay near the asked size."""
    import random

    rnd = random.Random(seed)
    ids = pa.array(range(rows), pa.int64())
    x = pa.array([rnd.random() for _ in range(rows)], pa.float64())
    y = pa.array([rnd.random() * 1000 for _ in range(rows)], pa.float64())
    tag = pc.cast(pc.multiply(ids, 7919), pa.string())
    return pa.table({"id": ids, "x": x, "y": y, "tag": tag})


def scan_times(server, warehouse: str, ns: str, name: str, workdir: Path) -> tuple[float, float, int]:
    con = duckdb_connect(workdir / "duckdb-ext")
    try:
        duckdb_attach(con, server, warehouse)
        t = time.perf_counter()
        count = con.execute(f"SELECT count(*), sum(x) FROM cat.{ns}.{name}").fetchone()[0]
        duck = time.perf_counter() - t
    finally:
        con.close()
    table = rest_catalog(server, warehouse).load_table((ns, name))
    t = time.perf_counter()
    rows = table.scan().to_arrow().num_rows
    py = time.perf_counter() - t
    assert rows == count, (rows, count)
    return duck, py, rows


def data_files(server, warehouse: str, ns: str, name: str) -> tuple[int, int]:
    table = rest_catalog(server, warehouse).load_table((ns, name))
    files = table.inspect.data_files()
    return files.num_rows, sum(files.column("file_size_in_bytes").to_pylist())


def run_tablebay(binary: Path, server, arn: str, target: int) -> tuple[float, float, dict]:
    t = time.perf_counter()
    proc = subprocess.Popen(
        [str(binary), "compact", "--data-dir", str(server.data_dir), "--region", REGION,
         "--account-id", server.account_id, "--arn-flavor", "aws", "--table-arn", arn,
         "--target-file-size-bytes", str(target), "--strategy", "binpack"],
        env=server.environment(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    out, err = proc.communicate()
    wall = time.perf_counter() - t
    if proc.returncode != 0:
        raise RuntimeError(f"tablebay compact failed: {err}")
    report = json.loads(out.strip().splitlines()[-1])
    return wall, report["seconds"], report


def run_spark(server, warehouse: str, ns: str, name: str, target: int, master: str) -> tuple[float, float, str]:
    """Runs the CALL in a Spark JVM; returns (wall seconds of the CALL, CPU seconds of JVM + server during it)."""
    sql = (f"SELECT count(*) FROM tablebay.{ns}.{name};\n"
           f"CALL tablebay.system.rewrite_data_files(table => '{ns}.{name}', "
           f"options => map('target-file-size-bytes', '{target}', 'min-input-files', '2'));\n")
    env = dict(os.environ)
    env.update({
        "TABLEBAY_ICEBERG_URI": catalog_uri(server),
        "TABLEBAY_WAREHOUSE": warehouse,
        "TABLEBAY_S3_ENDPOINT": server.s3_url,
        "AWS_ACCESS_KEY_ID": ACCESS_KEY_ID,
        "AWS_SECRET_ACCESS_KEY": SECRET_ACCESS_KEY,
        "AWS_REGION": REGION,
        "TABLEBAY_SPARK_MASTER": master,
    })
    proc = subprocess.Popen([str(ROOT / "clients/jvm/spark/run-sql.sh")], env=env, stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, bufsize=1)
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write(sql)
    proc.stdin.close()
    started = cpu_at_start = server_cpu_at_start = None
    lines = []
    for line in proc.stdout:
        lines.append(line)
        if started is None and "rewrite_data_files" in line:
            started = time.perf_counter()
            cpu_at_start = cpu_seconds(proc.pid) + jvm_children_cpu(proc.pid)
            server_cpu_at_start = cpu_seconds(server.pid)
    # The JVM exits right after the CALL's rows; its CPU is read just before it is reaped.
    ended = time.perf_counter()
    cpu_end = cpu_seconds(proc.pid) + jvm_children_cpu(proc.pid)
    server_cpu_end = cpu_seconds(server.pid)
    proc.wait()
    text = "".join(lines)
    if proc.returncode != 0 or started is None:
        raise RuntimeError(f"spark failed:\n{text[-4000:]}")
    cpu = (cpu_end - cpu_at_start) + (server_cpu_end - server_cpu_at_start)
    return ended - started, cpu, text


def jvm_children_cpu(pid: int) -> float:
    """run-sql.sh execs java, so the JVM is `pid` itself; children (none expected) are counted if present."""
    total = 0.0
    try:
        for child in Path(f"/proc/{pid}/task/{pid}/children").read_text().split():
            total += cpu_seconds(int(child))
    except (FileNotFoundError, ProcessLookupError):
        pass
    return total


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--files", type=int, default=1000)
    parser.add_argument("--file-mib", type=float, default=1.0)
    parser.add_argument("--target-mib", type=int, default=512)
    parser.add_argument("--bin", type=Path)
    parser.add_argument("--no-spark", action="store_true")
    parser.add_argument("--spark-master", default="local[2]")
    parser.add_argument("--workdir", type=Path, default=Path.home() / ".cache" / "tablebay-bench")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()

    target_dir = Path(os.environ.get("CARGO_TARGET_DIR") or Path.home() / ".cache" / "tablebay-target")
    binary = args.bin or target_dir / "release" / "tablebay"
    if not binary.exists():
        sys.exit(f"{binary} is missing: cargo build --release -p tablebay (or --bin)")
    os.environ["TABLEBAY_BIN"] = str(binary)
    args.workdir.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="compaction-", dir=args.workdir))
    server = TablebayServer(work / "server", arn_flavor="aws")
    server.start()
    try:
        s3tables = make_client(server.tables_url)
        warehouse = s3tables.create_table_bucket(name="compaction-bench")["arn"]
        catalog = rest_catalog(server, warehouse)
        catalog.create_namespace("bench")
        file_bytes = int(args.file_mib * MIB)
        # Rows per ~1 MiB file (8 + 8 + 8 + ~7 bytes a row in memory); PyIceberg bins by in-memory size.
        rows_per_file = max(1, file_bytes // 31)
        table_data = data(rows_per_file * args.files, seed=1)
        names = ["a"] + ([] if args.no_spark else ["b"])
        for name in names:
            t = catalog.create_table(("bench", name), SCHEMA,
                                     properties={"write.target-file-size-bytes": str(file_bytes)})
            started = time.perf_counter()
            t.append(table_data)
            print(f"table {name}: wrote {len(table_data)} rows in {time.perf_counter() - started:.1f}s", flush=True)
        files_a, bytes_a = data_files(server, warehouse, "bench", "a")
        print(f"table a: {files_a} data files, {bytes_a / MIB:.1f} MiB", flush=True)
        duck_before, py_before, rows = scan_times(server, warehouse, "bench", "a", work)

        target = args.target_mib * MIB
        arn_a = s3tables.get_table(tableBucketARN=warehouse, namespace="bench", name="a")["tableARN"]
        before_children = os.times()
        wall, engine_seconds, report = run_tablebay(binary, server, arn_a, target)
        after_children = os.times()
        tb_cpu = (after_children.children_user - before_children.children_user) + (
            after_children.children_system - before_children.children_system)
        files_after, bytes_after = data_files(server, warehouse, "bench", "a")
        duck_after, py_after, rows_after = scan_times(server, warehouse, "bench", "a", work)
        assert rows_after == rows, (rows_after, rows)

        results = {
            "files_in": report["filesIn"], "mib_in": report["bytesIn"] / MIB, "files_out": files_after,
            "mib_out": bytes_after / MIB, "tablebay_wall_s": wall, "tablebay_engine_s": engine_seconds,
            "tablebay_cpu_s": tb_cpu, "duckdb_scan_before_s": duck_before, "duckdb_scan_after_s": duck_after,
            "pyiceberg_scan_before_s": py_before, "pyiceberg_scan_after_s": py_after, "rows": rows,
        }
        mb_in = report["bytesIn"] / 1e6
        results["tablebay_mb_per_s"] = mb_in / wall
        results["tablebay_mb_per_cpu_s"] = mb_in / tb_cpu if tb_cpu else None
        if not args.no_spark:
            files_b, bytes_b = data_files(server, warehouse, "bench", "b")
            spark_wall, spark_cpu, _ = run_spark(server, warehouse, "bench", "b", target, args.spark_master)
            files_b_after, _ = data_files(server, warehouse, "bench", "b")
            results.update({
                "spark_files_in": files_b, "spark_files_out": files_b_after, "spark_wall_s": spark_wall,
                "spark_cpu_s": spark_cpu, "spark_mb_per_s": bytes_b / 1e6 / spark_wall,
                "spark_mb_per_cpu_s": bytes_b / 1e6 / spark_cpu if spark_cpu else None,
            })

        print()
        print(f"{'':28}{'files in':>9}{'MB in':>9}{'files out':>10}{'wall s':>9}{'CPU s':>8}{'MB/s':>8}{'MB/CPU-s':>10}")
        print(f"{'tablebay compact':28}{report['filesIn']:>9}{mb_in:>9.1f}{files_after:>10}{wall:>9.2f}"
              f"{tb_cpu:>8.2f}{results['tablebay_mb_per_s']:>8.1f}{results['tablebay_mb_per_cpu_s'] or 0:>10.1f}")
        if not args.no_spark:
            print(f"{'spark rewrite_data_files':28}{results['spark_files_in']:>9}{bytes_b / 1e6:>9.1f}"
                  f"{results['spark_files_out']:>10}{results['spark_wall_s']:>9.2f}{results['spark_cpu_s']:>8.2f}"
                  f"{results['spark_mb_per_s']:>8.1f}{results['spark_mb_per_cpu_s'] or 0:>10.1f}")
            print(f"\ntablebay / spark per CPU second: "
                  f"{results['tablebay_mb_per_cpu_s'] / results['spark_mb_per_cpu_s']:.2f}x "
                  f"(wall: {results['tablebay_mb_per_s'] / results['spark_mb_per_s']:.2f}x; aim >= 2x per core)")
        print(f"\nfull scan of {rows} rows      before    after")
        print(f"  DuckDB                  {duck_before:>8.2f}s {duck_after:>7.2f}s")
        print(f"  PyIceberg               {py_before:>8.2f}s {py_after:>7.2f}s")
        print(f"\nload average: {os.getloadavg()}")
        if args.json:
            args.json.write_text(json.dumps(results, indent=2))
    finally:
        server.stop()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
