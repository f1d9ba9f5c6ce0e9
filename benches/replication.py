#!/usr/bin/env python3
"""Replication lag benchmark: a source server takes PyIceberg appends at a steady rate (20 commits/s by default,
spread over `--tables` tables, each with its own writer process, since one PyIceberg writer manages about 5 commits/s
and writers in one process share its interpreter lock) replicated to a second server (its public APIs only, as docs/replication.md sets up); a poller
per table watches its replica. The lag of a commit is the time from the source acknowledging it to the replica first holding that
version (or a later one: versions are applied in order). Prints the median, p99 and max lag.

    ~/.cache/tablebay-venv/bin/python benches/replication.py [--bin PATH] [--rate 20] [--tables 4] [--seconds 30]

Needs the client-suite venv (scripts/python-env.sh). The binary defaults to $CARGO_TARGET_DIR/release/tablebay.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "clients" / "python"))

import boto3  # noqa: E402
import pyarrow as pa  # noqa: E402
from botocore.config import Config  # noqa: E402
from pyiceberg.schema import Schema  # noqa: E402
from pyiceberg.types import LongType, NestedField  # noqa: E402

from tablebay_test import ACCESS_KEY_ID, REGION, SECRET_ACCESS_KEY  # noqa: E402
from tablebay_test.clients import make_client  # noqa: E402
from tablebay_test.iceberg import rest_catalog  # noqa: E402
from tablebay_test.server import TablebayServer  # noqa: E402

REMOTE_ACCOUNT = "222233334444"
SOURCE_PROPERTY = "tablebay.replication.source-metadata-location"


def main() -> None:
    parser = argparse.ArgumentParser()
    target = os.environ.get("CARGO_TARGET_DIR", str(Path.home() / ".cache" / "tablebay-target"))
    parser.add_argument("--bin", default=str(Path(target) / "release" / "tablebay"))
    parser.add_argument("--rate", type=float, default=20.0, help="source commits per second")
    parser.add_argument("--tables", type=int, default=4, help="tables (one writer each) sharing the rate")
    parser.add_argument("--seconds", type=float, default=30.0)
    args = parser.parse_args()
    os.environ["TABLEBAY_BIN"] = args.bin
    # The benchmark's own code: tests/test_replication.py does the same set-up with assertions.
    sys.path.insert(0, str(ROOT / "clients" / "python"))
    from test_replication import config, replication_role  # noqa: E402

    work = Path(tempfile.mkdtemp(prefix="tablebay-bench-repl-"))
    remote = TablebayServer(work / "remote", account_id=REMOTE_ACCOUNT)
    remote.start()
    remotes = work / "remotes.toml"
    remotes.write_text(
        "[[remote]]\n"
        f'account_id = "{REMOTE_ACCOUNT}"\nendpoint = "{remote.tables_url}"\ns3_endpoint = "{remote.s3_url}"\n'
        f'access_key_id = "{ACCESS_KEY_ID}"\nsecret_access_key = "{SECRET_ACCESS_KEY}"\n')
    source = TablebayServer(work / "source", extra_args=("--replication-remotes", str(remotes),
                                                         "--maintenance-workers", "0"))
    source.start()
    try:
        role = replication_role(remote, REMOTE_ACCOUNT)
        tables, remote_tables = make_client(source.tables_url), make_client(remote.tables_url)
        bucket = tables.create_table_bucket(name="bench-source")["arn"]
        dest = remote_tables.create_table_bucket(name="bench-replica")["arn"]
        catalog = rest_catalog(source, bucket)
        catalog.create_namespace("ns")
        stop = multiprocessing.get_context("fork").Event()
        data = pa.Table.from_pydict({"id": [1]}, schema=pa.schema([pa.field("id", pa.int64())]))
        period = args.tables / args.rate

        def run(name: str, results) -> None:
            # A process of its own (forked): its own clients, nothing shared with the parent's connections.
            out: dict = {}
            tables = make_client(source.tables_url)
            s3 = boto3.session.Session(aws_access_key_id=ACCESS_KEY_ID, aws_secret_access_key=SECRET_ACCESS_KEY,
                                       region_name=REGION).client(
                "s3", endpoint_url=remote.s3_url, config=Config(s3={"addressing_style": "path"}))
            table = rest_catalog(source, bucket).create_table(
                f"ns.{name}", schema=Schema(NestedField(1, "id", LongType(), required=False)),
                properties={"write.metadata.previous-versions-max": "100000"})
            arn = tables.get_table(tableBucketARN=bucket, namespace="ns", name=name)["tableARN"]
            tables.put_table_replication(tableArn=arn, configuration=config(role, dest))
            commits: list[tuple[str, float]] = []   # (source metadata location, acknowledged at)
            seen: list[tuple[str, float]] = []      # (source version the replica holds, first seen at)
            done = threading.Event()

            def poll() -> None:
                poller = make_client(remote.tables_url)
                last = None
                while not done.is_set():
                    try:
                        got = poller.get_table(tableBucketARN=dest, namespace="ns", name=name)
                    except Exception:  # noqa: BLE001 - not created yet
                        time.sleep(0.01)
                        continue
                    location = got.get("metadataLocation")
                    if location and location != last:
                        at = time.monotonic()
                        last = location
                        b, key = location.removeprefix("s3://").split("/", 1)
                        meta = json.loads(s3.get_object(Bucket=b, Key=key)["Body"].read())
                        seen.append((meta["properties"][SOURCE_PROPERTY], at))
                    time.sleep(0.005)

            poller = threading.Thread(target=poll, daemon=True)
            poller.start()
            began = time.monotonic()
            next_at = began
            while not stop.is_set():
                now = time.monotonic()
                if now < next_at:
                    time.sleep(next_at - now)
                next_at += period
                table.append(data)
                commits.append((table.metadata_location, time.monotonic()))
            out["wrote"] = time.monotonic() - began
            deadline = time.monotonic() + 120
            while (not seen or seen[-1][0] != commits[-1][0]) and time.monotonic() < deadline:
                time.sleep(0.05)
            done.set()
            poller.join()
            order = {location: i for i, (location, _) in enumerate(commits)}
            lags = []
            for i, (_, acked) in enumerate(commits):
                visible = next((at for location, at in seen if order.get(location, -1) >= i), None)
                if visible is None:
                    raise SystemExit(f"{name}: commit {i} never reached the replica")
                lags.append(max(0.0, visible - acked))
            out["lags"] = lags
            results.put(out)

        fork = multiprocessing.get_context("fork")
        queue = fork.Queue()
        writers = [fork.Process(target=run, args=(f"t{i}", queue)) for i in range(args.tables)]
        for w in writers:
            w.start()
        time.sleep(args.seconds)
        stop.set()
        results = [queue.get(timeout=300) for _ in writers]
        for w in writers:
            w.join()
        lags = [lag for r in results for lag in r["lags"]]
        wrote = max(r["wrote"] for r in results)
        lags.sort()
        p99 = lags[min(len(lags) - 1, int(round(0.99 * (len(lags) - 1))))]
        print(json.dumps({
            "binary": args.bin,
            "tables": args.tables,
            "commits": len(lags),
            "achieved_commits_per_s": round(len(lags) / wrote, 1),
            "lag_median_ms": round(statistics.median(lags) * 1000, 1),
            "lag_p99_ms": round(p99 * 1000, 1),
            "lag_max_ms": round(lags[-1] * 1000, 1),
        }, indent=2))
    finally:
        source.stop()
        remote.stop()


if __name__ == "__main__":
    main()
