#!/usr/bin/env python3
"""Maintenance benchmark: how long snapshot expiration and unreferenced-file removal take on a table with many
small commits, beside PyIceberg computing the same referenced-file set client-side (reading every manifest list
and manifest through the same server), in one run.

    ~/.cache/tablebay-venv/bin/python benches/maintenance.py [--bin PATH] [--commits 200]

Needs the client-suite venv (scripts/python-env.sh): PyIceberg writes the table. The binary defaults to
$CARGO_TARGET_DIR/release/tablebay (build it with `cargo build --release -p tablebay`).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "clients" / "python"))

import pyarrow as pa  # noqa: E402
from pyiceberg.schema import Schema  # noqa: E402
from pyiceberg.types import LongType, NestedField  # noqa: E402

from tablebay_test.iceberg import rest_catalog  # noqa: E402
from tablebay_test.server import TablebayServer  # noqa: E402
from tablebay_test.signing import signed_request  # noqa: E402
from tablebay_test.clients import make_client  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser()
    target = os.environ.get("CARGO_TARGET_DIR", str(Path.home() / ".cache" / "tablebay-target"))
    parser.add_argument("--bin", default=str(Path(target) / "release" / "tablebay"))
    parser.add_argument("--commits", type=int, default=200)
    args = parser.parse_args()
    os.environ["TABLEBAY_BIN"] = args.bin
    work = Path(tempfile.mkdtemp(prefix="tablebay-bench-maint-"))
    server = TablebayServer(work, arn_flavor="aws", extra_args=("--maintenance-workers", "0",
                                                                "--maintenance-sweep-seconds", "0",
                                                                "--maintenance-day-seconds", "1"))
    server.start()
    try:
        s3tables = make_client(server.tables_url)
        bucket = s3tables.create_table_bucket(name="bench")["arn"]
        catalog = rest_catalog(server, bucket)
        catalog.create_namespace("ns")
        schema = Schema(NestedField(1, "id", LongType(), required=True))
        table = catalog.create_table("ns.t", schema=schema, properties={
            "history.expire.min-snapshots-to-keep": str(args.commits // 2),
            "history.expire.max-snapshot-age-ms": "1"})
        started = time.monotonic()
        for i in range(args.commits):
            table.append(pa.Table.from_pydict({"id": [i]}, schema=pa.schema([pa.field("id", pa.int64(), False)])))
        write_s = time.monotonic() - started
        arn = s3tables.get_table(tableBucketARN=bucket, namespace="ns", name="t")["tableARN"]
        table = catalog.load_table("ns.t")

        started = time.monotonic()
        referenced = set()
        for snapshot in table.metadata.snapshots:
            referenced.add(snapshot.manifest_list)
            for manifest in snapshot.manifests(table.io):
                if manifest.manifest_path in referenced:
                    continue
                referenced.add(manifest.manifest_path)
                for entry in manifest.fetch_manifest_entry(table.io, discard_deleted=True):
                    referenced.add(entry.data_file.file_path)
        client_s = time.monotonic() - started

        def run(job_type: str) -> tuple[dict, float]:
            t0 = time.monotonic()
            resp = signed_request(server.tables_url, "POST", "/admin/maintenance/run",
                                  {"tableArn": arn, "type": job_type})
            resp.raise_for_status()
            return resp.json(), time.monotonic() - t0

        removal, removal_s = run("icebergUnreferencedFileRemoval")
        expire, expire_s = run("icebergSnapshotManagement")
        print(f"table: {args.commits} appends written in {write_s:.1f} s "
              f"({args.commits / write_s:.1f} commits/s through PyIceberg)")
        print(f"{'what':58} {'seconds':>8} {'files':>7}")
        print(f"{'PyIceberg: referenced-file set, client-side':58} {client_s:8.2f} {len(referenced):7}")
        print(f"{'Tablebay: unreferenced-file removal (same set + listing)':58} {removal_s:8.2f} "
              f"{removal['details']['referencedFiles']:7}")
        print(f"{'Tablebay: expire half the snapshots, delete their files':58} {expire_s:8.2f} "
              f"{expire['filesIn']:7}")
        print(f"manifests read by the removal run: {removal['details']['manifestsRead']}; "
              f"snapshots expired: {expire['details']['snapshotsExpired']}")
    finally:
        server.stop()


if __name__ == "__main__":
    main()
