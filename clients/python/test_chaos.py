"""Issue 17: scale-out under faults. Three Tablebay instances on one PostgreSQL and a SeaweedFS bucket (the blob
store), HAProxy in front of both listeners (tablebay_test/cluster.py, started by the project's scripts). Through
the balancer, for about two and a half minutes:

- 8 PyIceberg writers append to 6 tables (two tables have 2 writers, so conflicts happen), at least 500 commits
  in all;
- a reader loads and scans the tables continuously;
- boto3 runs 3-part multipart uploads and single PUTs (the parts of one upload land on different instances);
- `POST /admin/maintenance/run` compacts a table every few seconds.

Meanwhile each instance is killed with kill -9 in turn and restarted, PostgreSQL is restarted once and
SeaweedFS is restarted once. The load generator keeps its own record of what was acknowledged; at the end:

- every acknowledged append is in its table exactly once, and nothing else is (an append whose outcome the
  client could not know is there once or not at all);
- every file a retained snapshot references exists and reads back: its size, its ETag (the MD5 it was written
  with) and its Parquet row count are the ones recorded;
- every acknowledged object and completed multipart upload reads back byte-exact (and every instance gives its
  ETag and size alike); no object is listed that was never acknowledged unless its outcome was unknown;
- no two runs of one maintenance job on one table overlapped;
- every instance serves the same metadata and the same rows;
- no Tablebay instance answered 500 while a dependency was down (HAProxy's request log, which sees every
  request: 503 is the right answer, with Retry-After on the tables listener), nor at any other time.

Needs scripts/seaweedfs.sh (builds `weed` once, cached) and scripts/haproxy.sh (installs Debian's haproxy when
missing); the `chaos` stage of scripts/test.sh runs it. CHAOS_LOAD_SECONDS (150) and CHAOS_MIN_COMMITS (500) change
the load (for a quick try); CHAOS_KEEP=1 keeps the logs and data under ~/.cache/tablebay-chaos, as a failure
does (and the failure's report shows each instance's error lines).
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import random
import threading
import time
import traceback
from collections import Counter, defaultdict
from concurrent.futures import ThreadPoolExecutor

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from botocore.exceptions import BotoCoreError, ClientError
from pyiceberg.exceptions import CommitFailedException
from pyiceberg.schema import Schema
from pyiceberg.types import LongType, NestedField, StringType

from tablebay_test.cluster import Cluster, Request
from tablebay_test.clients import make_client
from tablebay_test.iceberg import rest_catalog
from tablebay_test.s3 import make_s3_client, pattern
from tablebay_test.signing import signed_request

LOAD_SECONDS = float(os.environ.get("CHAOS_LOAD_SECONDS", "150"))
MAX_LOAD_SECONDS = LOAD_SECONDS + 180    # the load goes on past LOAD_SECONDS until MIN_COMMITS, up to this (a busy machine)
MIN_COMMITS = int(os.environ.get("CHAOS_MIN_COMMITS", "500"))
TABLES = 6
WRITERS = 8
ROWS = 10
PART = 5 * 1024 * 1024
SCHEMA = Schema(NestedField(1, "id", LongType(), required=True),
                NestedField(2, "batch", StringType(), required=True))
ARROW = pa.schema([pa.field("id", pa.int64(), nullable=False), pa.field("batch", pa.string(), nullable=False)])


class _Shim:
    """Something with `tables_url`, so the suite's client helpers can aim at the balancer or one instance."""

    def __init__(self, tables_url: str, s3_url: str = ""):
        self.tables_url, self.s3_url = tables_url, s3_url


class Record:
    """What the load generator saw, kept apart from anything the servers say."""

    def __init__(self):
        self.lock = threading.Lock()
        self.acked: dict[str, set[str]] = defaultdict(set)      # table → batches acknowledged
        self.unknown: dict[str, set[str]] = defaultdict(set)    # table → batches with an unknown outcome
        self.rejected: dict[str, set[str]] = defaultdict(set)   # table → batches refused with 409
        self.objects: dict[str, str] = {}                        # key → sha256 of what was acknowledged
        self.object_unknown: set[str] = set()                    # keys whose last step's outcome is unknown
        self.object_failed: set[str] = set()                     # keys never completed (refused before completion)
        self.multipart_done = 0
        self.errors: Counter[str] = Counter()
        self.reads = 0
        self.read_regressions: list[str] = []
        self.maintenance: Counter[int] = Counter()
        self.faults: list[tuple[str, float, float]] = []         # (what, down from, up again)
        self.crashes: list[str] = []                              # load threads that died

    def error(self, what: str, e: BaseException) -> None:
        with self.lock:
            self.errors[f"{what}: {type(e).__name__}"] += 1

    @property
    def commits(self) -> int:
        with self.lock:
            return sum(len(b) for b in self.acked.values())


def _batch_table(batch: str, base: int) -> pa.Table:
    return pa.Table.from_pylist([{"id": base + i, "batch": batch} for i in range(ROWS)], schema=ARROW)


def guarded(fn, record: "Record"):
    """Runs a load thread's body; an exception it did not expect is recorded (and fails the test)."""
    def run(*args):
        try:
            fn(*args)
        except BaseException:  # noqa: BLE001
            with record.lock:
                record.crashes.append(f"{fn.__name__}: {traceback.format_exc()}")
    return run


def writer(cluster: Cluster, warehouse: str, w: int, record: Record, stop: threading.Event) -> None:
    name = ("chaos", f"t{w % TABLES}")
    catalog = table = None
    n = 0
    while not stop.is_set():
        try:
            if table is None:
                catalog = rest_catalog(_Shim(cluster.tables_url), warehouse, name=f"writer-{w}")
                table = catalog.load_table(name)
        except Exception as e:  # noqa: BLE001 - a fault; try again
            record.error("writer load", e)
            table = None
            time.sleep(0.3)
            continue
        batch = f"w{w}-{n}"
        base = (w * 1_000_000 + n) * ROWS
        n += 1
        try:
            table.append(_batch_table(batch, base))
            with record.lock:
                record.acked[name[1]].add(batch)
        except CommitFailedException:
            with record.lock:
                record.rejected[name[1]].add(batch)
            table = None
        except Exception as e:  # noqa: BLE001 - 503, a dropped connection…: the outcome is unknown
            with record.lock:
                record.unknown[name[1]].add(batch)
            record.error("append", e)
            table = None
            time.sleep(0.2)


def reader(cluster: Cluster, warehouse: str, record: Record, stop: threading.Event) -> None:
    seen: dict[str, int] = {}
    while not stop.is_set():
        t = f"t{random.randrange(TABLES)}"
        try:
            catalog = rest_catalog(_Shim(cluster.tables_url), warehouse, name="reader")
            rows = catalog.load_table(("chaos", t)).scan(selected_fields=("id",)).to_arrow().num_rows
            with record.lock:
                record.reads += 1
                if rows < seen.get(t, 0):
                    record.read_regressions.append(f"{t}: {rows} rows after {seen[t]}")
                seen[t] = max(rows, seen.get(t, 0))
        except Exception as e:  # noqa: BLE001
            record.error("read", e)
            time.sleep(0.3)


def uploader(cluster: Cluster, bucket: str, u: int, record: Record, stop: threading.Event) -> None:
    s3 = make_s3_client(cluster.s3_url, read_timeout=60)
    n = 0
    while not stop.is_set():
        key = f"data/u{u}/obj-{n}"
        multipart = n % 2 == 0
        data = pattern(2 * PART + 64 * 1024 if multipart else 256 * 1024 + n, seed=u * 100_000 + n)
        n += 1
        digest = hashlib.sha256(data).hexdigest()
        stage = "start"
        try:
            if multipart:
                upload = s3.create_multipart_upload(Bucket=bucket, Key=key)["UploadId"]
                stage = "parts"
                parts = []
                for i, off in enumerate(range(0, len(data), PART)):
                    etag = s3.upload_part(Bucket=bucket, Key=key, UploadId=upload, PartNumber=i + 1,
                                          Body=data[off:off + PART])["ETag"]
                    parts.append({"PartNumber": i + 1, "ETag": etag})
                stage = "complete"
                s3.complete_multipart_upload(Bucket=bucket, Key=key, UploadId=upload,
                                             MultipartUpload={"Parts": parts})
            else:
                stage = "complete"
                s3.put_object(Bucket=bucket, Key=key, Body=data)
            with record.lock:
                record.objects[key] = digest
                record.multipart_done += multipart
        except (ClientError, BotoCoreError) as e:
            record.error(f"upload {stage}", e)
            status = (getattr(e, "response", None) or {}).get("ResponseMetadata", {}).get("HTTPStatusCode")
            with record.lock:
                # A refusal (4xx/5xx answer) before the completing request: the object cannot exist. A failed
                # completion, or no answer at all, leaves the outcome unknown.
                if stage != "complete" and status is not None:
                    record.object_failed.add(key)
                else:
                    record.object_unknown.add(key)
            time.sleep(0.2)


def maintainer(cluster: Cluster, arns: list[str], record: Record, stop: threading.Event) -> None:
    i = 0
    while not stop.wait(3.0):
        arn = arns[i % len(arns)]
        i += 1
        try:
            r = signed_request(cluster.tables_url, "POST", "/admin/maintenance/run",
                               {"tableArn": arn, "type": "icebergCompaction"}, timeout=120)
            with record.lock:
                record.maintenance[r.status_code] += 1
        except Exception as e:  # noqa: BLE001
            record.error("maintenance", e)


def faults(cluster: Cluster, record: Record, stop: threading.Event) -> None:
    """The fault schedule, spread over the load: each instance killed and restarted in turn, PostgreSQL and
    SeaweedFS restarted once each."""
    step = LOAD_SECONDS / 7

    def outage(what: str, action) -> None:
        began = time.time()
        action()
        record.faults.append((what, began, time.time()))

    schedule = [
        ("kill tb1", lambda: (cluster.kill(0), time.sleep(3), cluster.restart(0))),
        ("restart postgres", lambda: cluster.restart_postgres(down_for=4)),
        ("kill tb2", lambda: (cluster.kill(1), time.sleep(3), cluster.restart(1))),
        ("restart seaweedfs", lambda: cluster.restart_weed(down_for=4)),
        ("kill tb3", lambda: (cluster.kill(2), time.sleep(3), cluster.restart(2))),
    ]
    for what, action in schedule:
        if stop.wait(step):
            return
        print(f"chaos: {what} at +{time.time() - record.started:.0f}s", flush=True)
        outage(what, action)


# Set-up (about 20 s), the load (150 s or until 500 commits; a SeaweedFS restart after kill -9 alone takes about
# 30 s to take writes again) and the checks (about 90 s on the debug build).
pytestmark = pytest.mark.timeout(900)


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    # PostgreSQL's OS user must reach its directory: keep the cluster under the cache the scripts already use.
    base = os.path.join(os.path.expanduser("~"), ".cache", "tablebay-chaos", f"run-{os.getpid()}")
    c = Cluster(base, instances=3, backend="weed")
    try:
        c.start()
        yield c
    finally:
        c.stop()
        if c.failed or os.environ.get("CHAOS_KEEP") == "1":
            print(f"chaos: logs and data kept in {base}")
        else:
            c.remove()


def test_three_instances_behind_a_balancer_survive_crashes_and_dependency_restarts(cluster):
    tables = make_client(cluster.tables_url)
    bucket_arn = tables.create_table_bucket(name="chaos")["arn"]
    setup = rest_catalog(_Shim(cluster.tables_url), bucket_arn, name="setup")
    setup.create_namespace("chaos")
    arns = []
    for t in range(TABLES):
        setup.create_table(("chaos", f"t{t}"), SCHEMA)
        arns.append(tables.get_table(tableBucketARN=bucket_arn, namespace="chaos", name=f"t{t}")["tableARN"])
    tables.create_table(tableBucketARN=bucket_arn, namespace="chaos", name="objects", format="ICEBERG")
    warehouse = tables.get_table(tableBucketARN=bucket_arn, namespace="chaos", name="objects")["warehouseLocation"]
    obj_bucket = warehouse.removeprefix("s3://").split("/", 1)[0]

    record = Record()
    record.started = time.time()
    stop_load, stop_faults = threading.Event(), threading.Event()
    workers = [threading.Thread(target=guarded(writer, record), args=(cluster, bucket_arn, w, record, stop_load), daemon=True)
               for w in range(WRITERS)]
    workers += [threading.Thread(target=guarded(reader, record), args=(cluster, bucket_arn, record, stop_load), daemon=True),
                threading.Thread(target=guarded(maintainer, record), args=(cluster, arns, record, stop_load), daemon=True)]
    workers += [threading.Thread(target=guarded(uploader, record), args=(cluster, obj_bucket, u, record, stop_load), daemon=True)
                for u in range(2)]
    fault_thread = threading.Thread(target=guarded(faults, record), args=(cluster, record, stop_faults), daemon=True)
    for t in workers:
        t.start()
    fault_thread.start()
    try:
        while True:
            time.sleep(5)
            elapsed = time.time() - record.started
            print(f"chaos: +{elapsed:.0f}s commits={record.commits} objects={len(record.objects)} "
                  f"reads={record.reads} errors={sum(record.errors.values())}", flush=True)
            if elapsed >= MAX_LOAD_SECONDS:
                break
            if elapsed >= LOAD_SECONDS and record.commits >= MIN_COMMITS and not fault_thread.is_alive():
                break
    finally:
        stop_load.set()
        stop_faults.set()
        for t in workers:
            t.join(timeout=180)
        fault_thread.join(timeout=300)
    load_seconds = time.time() - record.started
    print(f"chaos: load ran {load_seconds:.0f}s; faults: "
          + ", ".join(f"{w} (+{a - record.started:.0f}s, {b - a:.1f}s)" for w, a, b in record.faults))
    print(f"chaos: errors seen by clients: {dict(record.errors)}")
    print(f"chaos: maintenance answers: {dict(record.maintenance)}")
    cluster.wait_all_up(timeout=120)

    assert not record.crashes, "load threads died:\n" + "\n".join(record.crashes)
    assert len(record.faults) == 5, f"the fault schedule did not finish: {record.faults}"
    assert record.commits >= MIN_COMMITS, f"only {record.commits} commits acknowledged"
    assert record.multipart_done >= 3, "too few multipart uploads completed"
    assert record.reads > 0 and not record.read_regressions, record.read_regressions

    check_tables(cluster, bucket_arn, record)
    check_objects(cluster, obj_bucket, record)
    check_maintenance(cluster, arns)
    check_no_500(cluster, record)


def check_tables(cluster: Cluster, warehouse: str, record: Record) -> None:
    s3 = make_s3_client(cluster.s3_url)
    via = [rest_catalog(_Shim(cluster.tables_url), warehouse, name="check")]
    via += [rest_catalog(_Shim(inst.tables_url), warehouse, name=f"check-{i}")
            for i, inst in enumerate(cluster.instances)]
    unknown_landed = 0
    files_checked = 0
    for t in range(TABLES):
        name = f"t{t}"
        loaded = [c.load_table(("chaos", name)) for c in via]
        locations = {tbl.metadata_location for tbl in loaded}
        assert len(locations) == 1, f"{name}: the instances disagree: {locations}"
        batches = [loaded[0].scan(selected_fields=("batch",)).to_arrow().column("batch").to_pylist()]
        for other in loaded[1:]:
            rows = other.scan(selected_fields=("batch",)).to_arrow().column("batch").to_pylist()
            assert sorted(rows) == sorted(batches[0]), f"{name}: an instance reads other rows"
        counts = Counter(batches[0])
        acked, unknown = record.acked[name], record.unknown[name]
        for batch in acked:
            assert counts.get(batch) == ROWS, f"{name}: acknowledged {batch} has {counts.get(batch, 0)} rows"
        for batch, count in counts.items():
            assert batch in acked or batch in unknown, f"{name}: {batch} is there but was never acknowledged"
            assert count == ROWS, f"{name}: {batch} has {count} rows (applied more than once?)"
            unknown_landed += batch in unknown
        files_checked += check_files(loaded[0], s3)
    print(f"chaos: {sum(len(b) for b in record.unknown.values())} appends had an unknown outcome, "
          f"{unknown_landed} of them landed; {files_checked} referenced files read back")


def _split(uri: str) -> tuple[str, str]:
    bucket, _, key = uri.removeprefix("s3://").partition("/")
    return bucket, key


def check_files(table, s3) -> int:
    """Every manifest list, manifest and live data file of every retained snapshot reads back whole."""
    seen: set[str] = set()
    io_ = table.io
    for snapshot in table.metadata.snapshots:
        to_read = {snapshot.manifest_list: None}
        for manifest in snapshot.manifests(io_):
            if manifest.manifest_path in seen:  # a manifest is immutable: its files were listed already
                continue
            to_read[manifest.manifest_path] = manifest.manifest_length
            for entry in manifest.fetch_manifest_entry(io_, discard_deleted=True):
                f = entry.data_file
                to_read[f.file_path] = (f.file_size_in_bytes, f.record_count)
        for path, expect in to_read.items():
            if path in seen:
                continue
            seen.add(path)
            bucket, key = _split(path)
            got = s3.get_object(Bucket=bucket, Key=key)
            body = got["Body"].read()
            etag = got["ETag"].strip('"')
            if "-" not in etag:
                assert hashlib.md5(body).hexdigest() == etag, f"{path}: bytes differ from their ETag"
            if isinstance(expect, int):
                assert len(body) == expect, f"{path}: {len(body)} bytes, manifest list says {expect}"
            elif isinstance(expect, tuple):
                size, rows = expect
                assert len(body) == size, f"{path}: {len(body)} bytes, manifest says {size}"
                assert pq.read_metadata(io.BytesIO(body)).num_rows == rows, f"{path}: row count"
    return len(seen)


def check_objects(cluster: Cluster, bucket: str, record: Record) -> None:
    clients = [make_s3_client(cluster.s3_url)] + [make_s3_client(i.s3_url) for i in cluster.instances]
    for key, digest in record.objects.items():
        got = clients[0].get_object(Bucket=bucket, Key=key)
        body = got["Body"].read()
        assert hashlib.sha256(body).hexdigest() == digest, f"{key} does not read back byte-exact"
        # Every instance describes it alike (reading it whole through each would only repeat the same reads).
        for c in clients[1:]:
            head = c.head_object(Bucket=bucket, Key=key)
            assert (head["ETag"], head["ContentLength"]) == (got["ETag"], len(body)), f"{key} differs on {c}"
    listed = set()
    for page in clients[0].get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix="data/"):
        listed.update(o["Key"] for o in page.get("Contents", []))
    assert set(record.objects) <= listed, f"acknowledged but not listed: {set(record.objects) - listed}"
    stray = listed - set(record.objects) - record.object_unknown
    assert not stray, f"listed but never acknowledged: {sorted(stray)[:10]}"
    print(f"chaos: {len(record.objects)} objects ({record.multipart_done} multipart) read back byte-exact "
          f"through the balancer, alike on every instance; {len(record.object_unknown)} had an unknown outcome")


def check_maintenance(cluster: Cluster, arns: list[str]) -> None:
    overlaps = []
    runs_seen = 0
    for arn in arns:
        from urllib.parse import quote
        r = signed_request(cluster.tables_url, "GET", f"/admin/maintenance/runs?tableArn={quote(arn, safe='')}"
                           "&maxRuns=1000")
        assert r.status_code == 200, r.text
        by_type = defaultdict(list)
        for run in r.json()["runs"]:
            if run.get("outcome") == "Skipped":
                continue
            start = _epoch(run["startedAt"])
            by_type[run["type"]].append((start, start + run.get("durationMs", 0) / 1000, run["worker"]))
        for kind, runs in by_type.items():
            runs.sort()
            runs_seen += len(runs)
            for (a0, a1, wa), (b0, b1, wb) in zip(runs, runs[1:]):
                if b0 < a1 - 0.001:
                    overlaps.append(f"{arn} {kind}: {wa} [{a0:.3f}, {a1:.3f}] and {wb} [{b0:.3f}, {b1:.3f}]")
    assert runs_seen > 0, "no maintenance run was recorded"
    assert not overlaps, "maintenance runs overlapped:\n" + "\n".join(overlaps)
    print(f"chaos: {runs_seen} maintenance runs recorded, none overlapping")


def _epoch(stamp: str) -> float:
    from datetime import datetime
    return datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()


def check_no_500(cluster: Cluster, record: Record) -> None:
    log = cluster.requests()
    assert log, "HAProxy logged no requests"
    statuses = Counter((r.status, r.from_server) for r in log)
    print(f"chaos: {len(log)} requests through the balancer; (status, answered by an instance): "
          f"{dict(sorted(statuses.items()))}")
    uploads = defaultdict(set)
    for r in log:
        if r.method == "PUT" and "uploadId=" in r.uri and "partNumber=" in r.uri:
            uploads[r.uri.split("uploadId=", 1)[1].split("&", 1)[0]].add(r.server)
    spread = sum(1 for servers in uploads.values() if len(servers) > 1)
    print(f"chaos: {spread} of {len(uploads)} multipart uploads (boto3's and pyarrow's) had parts on more than one "
          "instance")
    assert spread > 0, "no multipart upload spread over instances"
    # Dependency outages, with 10 s after each for the instances to notice the store is back. A request is in
    # one if it was in flight during it (HAProxy logs when it was accepted and how long it took).
    windows = [(a, b + 10) for what, a, b in record.faults if "restart" in what]

    def in_outage(r: Request) -> bool:
        return any(r.at <= b and a <= r.at + r.ms / 1000 for a, b in windows)

    served_500 = [r for r in log if r.status == 500 and r.from_server]
    during = [r for r in served_500 if in_outage(r)]
    unavailable = sum(1 for r in log if r.status == 503 and r.from_server and in_outage(r))
    print(f"chaos: {unavailable} answers were 503 while a dependency was down")
    # The tables listener's surfaces (Iceberg REST, control plane, admin) say when to retry; S3's XML errors
    # have no such header.
    no_retry_after = [r for r in log if r.status == 503 and r.from_server and r.frontend == "tables_in"
                      and r.retry_after == "-"]
    assert not no_retry_after, f"503 without Retry-After: {[(r.method, r.uri) for r in no_retry_after[:5]]}"
    show = "\n".join(f"+{r.at - record.started:.1f}s {r.server} {r.method} {r.uri}" for r in served_500[:20])
    assert not during, f"{len(during)} answers were 500 while a dependency was down:\n{show}"
    assert not served_500, f"{len(served_500)} answers were 500:\n{show}"
