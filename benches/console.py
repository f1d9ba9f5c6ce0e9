#!/usr/bin/env python3
"""Benchmark of the web console (issue 18): server time per page for a bucket of 1,000 tables and a table of 1,000
snapshots. It is never part of the tests.

    python3 benches/console.py [--bin PATH] [--tables 1000] [--snapshots 1000] [--requests 50]

Set-up, through the real clients: 1,000 tables in one bucket (boto3 `create_table` with a schema, so each has
metadata), and one table that PyIceberg appends to 1,000 times (1,000 snapshots, each adding one small file and, as
PyIceberg's fast append does, one manifest). Then each page is fetched `--requests` times with a signed-in
session, one at a time, after one first view, and the server's own time for each request is read from its log
line (`latency_ms` of the pipeline's one line per request): median and p99 per page, and the first view's time
(the table page reads a snapshot's manifests once; later views of the same snapshot reuse what it read). Run it with the venv of scripts/python-env.sh.
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "clients" / "python"))

import pyarrow as pa  # noqa: E402
import requests  # noqa: E402

from tablebay_test import ACCESS_KEY_ID, SECRET_ACCESS_KEY  # noqa: E402
from tablebay_test.clients import make_client  # noqa: E402
from tablebay_test.iceberg import rest_catalog  # noqa: E402
from tablebay_test.server import TablebayServer  # noqa: E402

SCHEMA = {"fields": [{"name": "id", "type": "long", "required": True}, {"name": "note", "type": "string"}]}
LINE = re.compile(r'surface="console".*?operation="(?P<op>[^"]+)".*?status=(?P<status>\d+) latency_ms=(?P<ms>[\d.]+)'
                  r'.*?request_id="(?P<id>[^"]+)"')


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(p / 100 * (len(ordered) - 1))))
    return ordered[index]


def server_times(log: Path, ids: set[str]) -> list[float]:
    times = []
    for line in log.read_text(errors="replace").splitlines():
        m = LINE.search(line)
        if m and m["id"] in ids:
            assert m["status"] == "200", line
            times.append(float(m["ms"]))
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--bin", help="the tablebay binary (default: TABLEBAY_BIN or the debug build)")
    parser.add_argument("--tables", type=int, default=1000)
    parser.add_argument("--snapshots", type=int, default=1000)
    parser.add_argument("--requests", type=int, default=50)
    args = parser.parse_args()
    if args.bin:
        import os
        os.environ["TABLEBAY_BIN"] = args.bin
    server = TablebayServer(Path(tempfile.mkdtemp(prefix="tablebay-console-bench-")), arn_flavor="aws",
                            extra_args=("--maintenance-workers", "0", "--maintenance-sweep-seconds", "0"))
    server.start()
    try:
        s3tables = make_client(server.tables_url)
        started = time.monotonic()
        bucket_arn = s3tables.create_table_bucket(name="bench")["arn"]
        s3tables.create_namespace(tableBucketARN=bucket_arn, namespace=["wide"])
        s3tables.create_namespace(tableBucketARN=bucket_arn, namespace=["deep"])
        for i in range(args.tables):
            s3tables.create_table(tableBucketARN=bucket_arn, namespace="wide", name=f"t{i:04d}", format="ICEBERG",
                                  metadata={"iceberg": {"schema": SCHEMA}})
        print(f"{args.tables} tables in {time.monotonic() - started:.0f} s", file=sys.stderr)
        catalog = rest_catalog(server, bucket_arn)
        schema = pa.schema([pa.field("id", pa.int64(), nullable=False), pa.field("note", pa.string())])
        from pyiceberg.schema import Schema
        from pyiceberg.types import LongType, NestedField, StringType
        table = catalog.create_table("deep.history", schema=Schema(
            NestedField(1, "id", LongType(), required=True), NestedField(2, "note", StringType(), required=False)))
        started = time.monotonic()
        for i in range(args.snapshots):
            table.append(pa.table({"id": [i], "note": [f"row {i}"]}, schema=schema))
        print(f"{args.snapshots} snapshots in {time.monotonic() - started:.0f} s", file=sys.stderr)

        session = requests.Session()
        resp = session.post(server.tables_url + "/console/login", allow_redirects=False, timeout=30,
                            data={"access_key_id": ACCESS_KEY_ID, "secret_access_key": SECRET_ACCESS_KEY})
        assert resp.status_code == 303, resp.text
        deep = "/console/buckets/bench/namespaces/deep/tables/history"
        wide = f"/console/buckets/bench/namespaces/wide/tables/t{args.tables // 2:04d}"
        pages = [
            ("bucket list", "/console/buckets"),
            (f"bucket page ({args.tables + 1} tables)", "/console/buckets/bench"),
            ("bucket page, 10th page of tables", None),
            ("connect page", "/console/buckets/bench/connect"),
            ("table page (no snapshots)", wide),
            (f"table page ({args.snapshots} snapshots)", deep),
            (f"maintenance page ({args.snapshots} snapshots)", deep + "/maintenance"),
        ]
        # The 10th page of the bucket's tables: follow the pager.
        path = "/console/buckets/bench"
        for _ in range(9):
            html = session.get(server.tables_url + path, timeout=60).text
            found = re.search(r'href="(/console/buckets/bench\?tableToken=[^"]+)" rel="next"', html)
            if not found:
                break
            path = found[1]
        pages[2] = (pages[2][0], path.replace("&amp;", "&"))
        rows = []
        for name, path in pages:
            ids = set()
            # The first view: nothing of this page cached yet (the parsed metadata, a snapshot's files and rows).
            first = session.get(server.tables_url + path, timeout=120).headers["x-request-id"]
            for _ in range(args.requests):
                resp = session.get(server.tables_url + path, timeout=120)
                assert resp.status_code == 200, (path, resp.status_code)
                ids.add(resp.headers["x-request-id"])
            time.sleep(0.2)  # the log line is written as the answer goes out
            times = server_times(server.log_path, ids)
            assert len(times) == len(ids), (len(times), len(ids))
            cold = server_times(server.log_path, {first})
            rows.append((name, statistics.median(times), percentile(times, 99), cold[0], len(resp.content)))
        print(f"{'page':<44} {'median ms':>10} {'p99 ms':>10} {'first ms':>9} {'HTML KiB':>9}")
        for name, median, p99, cold, size in rows:
            print(f"{name:<44} {median:>10.1f} {p99:>10.1f} {cold:>9.1f} {size / 1024:>9.0f}")
        print(json.dumps({name: {"median_ms": round(m, 1), "p99_ms": round(p, 1), "first_ms": round(c, 1)}
                          for name, m, p, c, _ in rows}))
    finally:
        server.stop()


if __name__ == "__main__":
    main()
