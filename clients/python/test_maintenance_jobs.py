"""Maintenance jobs on real tables written by PyIceberg (issue 6): snapshot expiration and unreferenced-file
removal delete exactly the files no retained snapshot (or metadata) needs, checked against the full set of
files every retained snapshot references, computed here independently from the manifests PyIceberg reads;
a file a writer just uploaded is never deleted; abandoned multipart uploads are aborted; job status follows
the runs; `POST /admin/maintenance/run` answers the run record and `GET /admin/maintenance/runs` lists it.

The module's server runs no workers and no sweep (`--maintenance-workers 0`), so only run-now runs jobs, and
counts a "day" as one second (`--maintenance-day-seconds 1`); waiting for days therefore means sleeping
seconds, which these tests do on purpose (never asserting how long anything took).
"""

from __future__ import annotations

import json
import time

import pyarrow as pa
import pytest
from pyiceberg.expressions import EqualTo
from pyiceberg.schema import Schema
from pyiceberg.types import LongType, NestedField, StringType

from tablebay_test.expect import unique
from tablebay_test.iceberg import data_plane_missing, list_keys, rest_catalog, s3_client, split_s3_location
from tablebay_test.server import TablebayServer
from tablebay_test.signing import quote_arn, signed_request

SCHEMA = Schema(NestedField(1, "id", LongType(), required=True), NestedField(2, "note", StringType(), required=False))
ARROW = pa.schema([pa.field("id", pa.int64(), nullable=False), pa.field("note", pa.string(), nullable=True)])
DAY = 1.0


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    srv = TablebayServer(tmp_path_factory.mktemp("tablebay-maint"), arn_flavor="aws",
                         extra_args=("--maintenance-workers", "0", "--maintenance-sweep-seconds", "0",
                                     "--maintenance-day-seconds", str(DAY)))
    srv.start()
    if data_plane_missing(srv):
        srv.stop()
        pytest.skip(data_plane_missing(srv))
    yield srv
    srv.stop()


def rows(ids) -> pa.Table:
    ids = list(ids)
    return pa.Table.from_pydict({"id": ids, "note": [f"row-{i}" for i in ids]}, schema=ARROW)


def run_now(server, table_arn: str, job_type: str) -> dict:
    resp = signed_request(server.tables_url, "POST", "/admin/maintenance/run",
                          {"tableArn": table_arn, "type": job_type})
    assert resp.status_code == 200, resp.text
    run = resp.json()
    assert run["tableArn"] == table_arn and run["type"] == job_type, run
    return run


def table_arn(s3tables, bucket_arn: str, namespace: str, name: str) -> str:
    return s3tables.get_table(tableBucketARN=bucket_arn, namespace=namespace, name=name)["tableARN"]


def job_status(s3tables, bucket_arn: str, namespace: str, name: str) -> dict:
    return s3tables.get_table_maintenance_job_status(tableBucketARN=bucket_arn, namespace=namespace,
                                                     name=name)["status"]


def snapshot_files(table, snapshot) -> set[str]:
    """Every file one snapshot needs: its manifest list, its manifests, their live data and delete files."""
    io = table.io
    files = {snapshot.manifest_list}
    for manifest in snapshot.manifests(io):
        files.add(manifest.manifest_path)
        for entry in manifest.fetch_manifest_entry(io, discard_deleted=True):
            files.add(entry.data_file.file_path)
    return files


def keys(paths: set[str], location: str) -> set[str]:
    bucket, _ = split_s3_location(location)
    out = set()
    for p in paths:
        b, key = split_s3_location(p)
        if b == bucket:
            out.add(key)
    return out


def test_snapshot_expiration_deletes_exactly_what_no_retained_snapshot_needs(server, s3tables, bucket, catalog):
    ns = unique("ns", "_")
    catalog.create_namespace(ns)
    # Keep the newest 3 snapshots of main; anything older is past the age limit (1 ms) and expires.
    table = catalog.create_table(f"{ns}.events", schema=SCHEMA, properties={
        "history.expire.min-snapshots-to-keep": "3", "history.expire.max-snapshot-age-ms": "1"})
    for i in range(6):
        table.append(rows(range(i * 10, i * 10 + 10)))
    # A delete rewrites a data file: the old file stays needed only by the snapshots before it.
    table.delete(EqualTo("id", 3))
    table.append(rows(range(100, 105)))
    table = catalog.load_table(f"{ns}.events")
    arn = table_arn(s3tables, bucket.arn, ns, "events")
    assert job_status(s3tables, bucket.arn, ns, "events")["icebergSnapshotManagement"] == {"status": "Not_Yet_Run"}

    snapshots = list(table.metadata.snapshots)
    ancestry = []
    current = table.current_snapshot()
    while current is not None:
        ancestry.append(current.snapshot_id)
        current = table.snapshot_by_id(current.parent_snapshot_id) if current.parent_snapshot_id else None
    retained_ids = set(ancestry[:3])
    expired_ids = {s.snapshot_id for s in snapshots} - retained_ids
    assert len(expired_ids) == len(snapshots) - 3 >= 5
    retained_files = set().union(*(snapshot_files(table, s) for s in snapshots if s.snapshot_id in retained_ids))
    expired_files = set().union(*(snapshot_files(table, s) for s in snapshots if s.snapshot_id in expired_ids))
    expected_deleted = keys(expired_files - retained_files, table.location())
    assert expected_deleted, "the delete left files only expired snapshots need"
    rows_before = sorted(table.scan().to_arrow().to_pylist(), key=lambda r: r["id"])
    before = set(list_keys(server, table.location()))

    run = run_now(server, arn, "icebergSnapshotManagement")
    assert run["outcome"] == "Successful", run
    assert run["details"]["snapshotsExpired"] == len(expired_ids), run
    assert run["filesIn"] == len(expected_deleted), run
    assert run["bytesIn"] > 0 and run["trigger"] == "manual" and run["durationMs"] >= 0

    after = set(list_keys(server, table.location()))
    # Exactly the files only expired snapshots referenced are gone; every file a retained snapshot needs stays.
    assert before - after == expected_deleted
    assert keys(retained_files, table.location()) <= after
    table = catalog.load_table(f"{ns}.events")
    assert {s.snapshot_id for s in table.metadata.snapshots} == retained_ids
    assert sorted(table.scan().to_arrow().to_pylist(), key=lambda r: r["id"]) == rows_before
    # The job's status follows the run.
    status = job_status(s3tables, bucket.arn, ns, "events")["icebergSnapshotManagement"]
    assert status["status"] == "Successful" and "lastRunTimestamp" in status, status
    # Nothing more is due: a second run expires nothing and deletes nothing.
    again = run_now(server, arn, "icebergSnapshotManagement")
    assert (again["outcome"], again["details"]["snapshotsExpired"], again["filesIn"]) == ("Successful", 0, 0)
    listed = signed_request(server.tables_url, "GET", f"/admin/maintenance/runs?tableArn={quote_arn(arn)}").json()
    assert [r["runId"] for r in listed["runs"]] == [again["runId"], run["runId"]]


def test_unreferenced_files_become_noncurrent_then_are_deleted(server, s3tables, bucket, catalog):
    s3tables.put_table_bucket_maintenance_configuration(
        tableBucketARN=bucket.arn, type="icebergUnreferencedFileRemoval",
        value={"status": "enabled",
               "settings": {"icebergUnreferencedFileRemoval": {"unreferencedDays": 1, "nonCurrentDays": 1}}})
    ns = unique("ns", "_")
    catalog.create_namespace(ns)
    # Keep only two previous metadata files in the log: older ones are unreferenced.
    table = catalog.create_table(f"{ns}.logs", schema=SCHEMA, properties={
        "write.metadata.previous-versions-max": "2"})
    for i in range(4):
        table.append(rows(range(i * 5, i * 5 + 5)))
    table = catalog.load_table(f"{ns}.logs")
    arn = table_arn(s3tables, bucket.arn, ns, "logs")
    bucket_name, _ = split_s3_location(table.location())
    s3 = s3_client(server)
    # Orphans: a data file of a writer that never committed, and a stray manifest.
    for key in ("data/orphan-never-committed.parquet", "metadata/stray-manifest.avro"):
        s3.put_object(Bucket=bucket_name, Key=key, Body=b"x" * 100)
    upload = s3.create_multipart_upload(Bucket=bucket_name, Key="data/abandoned.parquet")["UploadId"]
    s3.upload_part(Bucket=bucket_name, Key="data/abandoned.parquet", UploadId=upload, PartNumber=1, Body=b"p" * 10)

    # Independently: everything the metadata keeps (every snapshot's files, current metadata, metadata log).
    referenced = set().union(*(snapshot_files(table, s) for s in table.metadata.snapshots))
    referenced.add(table.metadata_location)
    referenced |= {log.metadata_file for log in table.metadata.metadata_log}
    all_keys = set(list_keys(server, table.location()))
    expected_unreferenced = all_keys - keys(referenced, table.location())
    assert {"data/orphan-never-committed.parquet", "metadata/stray-manifest.avro"} <= expected_unreferenced
    assert any(k.endswith(".metadata.json") for k in expected_unreferenced), "metadata beyond the log"

    time.sleep(DAY * 1.5)  # older than unreferencedDays
    first = run_now(server, arn, "icebergUnreferencedFileRemoval")
    assert first["outcome"] == "Successful", first
    assert first["details"]["markedNoncurrent"] == len(expected_unreferenced), first
    assert first["filesIn"] == 0, "nothing is deleted before nonCurrentDays"
    assert set(list_keys(server, table.location())) == all_keys

    # A writer uploads a file now (not yet committed): it must survive.
    s3.put_object(Bucket=bucket_name, Key="data/just-written.parquet", Body=b"y" * 50)
    time.sleep(DAY * 1.5)  # noncurrent for longer than nonCurrentDays
    second = run_now(server, arn, "icebergUnreferencedFileRemoval")
    assert second["outcome"] == "Successful", second
    after = set(list_keys(server, table.location()))
    assert all_keys - after == expected_unreferenced, "exactly the unreferenced files are deleted"
    assert "data/just-written.parquet" in after
    assert second["filesIn"] == len(expected_unreferenced)
    # Older than unreferencedDays + nonCurrentDays by the second run at the latest (on a slow machine already
    # by the first): aborted exactly once.
    assert first["details"]["uploadsAborted"] + second["details"]["uploadsAborted"] == 1, (first, second)
    assert s3.list_multipart_uploads(Bucket=bucket_name).get("Uploads", []) == []
    # The table still reads, with every row.
    table = catalog.load_table(f"{ns}.logs")
    assert sorted(r["id"] for r in table.scan().to_arrow().to_pylist()) == list(range(20))
    status = job_status(s3tables, bucket.arn, ns, "logs")["icebergUnreferencedFileRemoval"]
    assert status["status"] == "Successful", status


def test_disabled_and_failed_status_and_admin_errors(server, s3tables, bucket, catalog):
    ns = unique("ns", "_")
    catalog.create_namespace(ns)
    catalog.create_table(f"{ns}.t", schema=SCHEMA).append(rows(range(3)))
    arn = table_arn(s3tables, bucket.arn, ns, "t")
    s3tables.put_table_maintenance_configuration(
        tableBucketARN=bucket.arn, namespace=ns, name="t", type="icebergSnapshotManagement",
        value={"status": "disabled"})
    assert job_status(s3tables, bucket.arn, ns, "t")["icebergSnapshotManagement"] == {"status": "Disabled"}
    # Compaction reports what its run did: Successful, or Failed with the reason.
    run = run_now(server, arn, "icebergCompaction")
    status = job_status(s3tables, bucket.arn, ns, "t")["icebergCompaction"]
    assert status["status"] == run["outcome"], (status, run)
    if run["outcome"] == "Failed":
        assert status["failureMessage"] == run["message"]
    # Bad input: JSON errors, nothing runs.
    for body, code in [
        ("{", 400),
        ({"tableArn": arn}, 400),
        ({"tableArn": arn, "type": "icebergVacuum"}, 400),
        ({"tableArn": "not-an-arn", "type": "icebergSnapshotManagement"}, 400),
        ({"tableArn": arn.rsplit("/", 1)[0] + "/00000000-0000-7000-8000-000000000000",
          "type": "icebergSnapshotManagement"}, 404),
        ({"tableArn": arn.replace("111122223333", "999999999999"), "type": "icebergSnapshotManagement"}, 403),
    ]:
        resp = signed_request(server.tables_url, "POST", "/admin/maintenance/run", body)
        assert resp.status_code == code, (body, resp.text)
        assert resp.headers["Content-Type"] == "application/json" and json.loads(resp.text)["message"]
    unsigned = signed_request(server.tables_url, "POST", "/admin/maintenance/run",
                              {"tableArn": arn, "type": "icebergSnapshotManagement"}, sign=False)
    assert unsigned.status_code == 403
    listed = signed_request(server.tables_url, "GET", f"/admin/maintenance/runs?tableArn={quote_arn(arn)}").json()
    assert [r["type"] for r in listed["runs"]] == ["icebergCompaction"]
    metrics = server.metrics_text() if hasattr(server, "metrics_text") else \
        signed_request(server.tables_url, "GET", "/metrics", sign=False).text
    assert 'tablebay_maintenance_runs_total{type="icebergCompaction"' in metrics


def test_a_writer_never_fails_while_snapshots_expire(server, s3tables, bucket, catalog):
    """Expiration commits with tight requirements and backs off when a writer wins; the writer's commits all
    succeed (PyIceberg's own commit, no retries added here) and every row it wrote is there afterwards."""
    import threading

    ns = unique("ns", "_")
    catalog.create_namespace(ns)
    catalog.create_table(f"{ns}.stream", schema=SCHEMA, properties={
        "history.expire.min-snapshots-to-keep": "1", "history.expire.max-snapshot-age-ms": "1"})
    arn = table_arn(s3tables, bucket.arn, ns, "stream")
    errors: list[BaseException] = []
    batches = 15

    def write():
        writer = rest_catalog(server, bucket.arn).load_table(f"{ns}.stream")
        try:
            for i in range(batches):
                writer.append(rows(range(i * 10, i * 10 + 10)))
        except BaseException as e:  # noqa: BLE001 - reported below
            errors.append(e)

    thread = threading.Thread(target=write)
    thread.start()
    outcomes = []
    while thread.is_alive():
        outcomes.append(run_now(server, arn, "icebergSnapshotManagement")["outcome"])
    thread.join()
    assert errors == [], errors
    assert set(outcomes) <= {"Successful", "Skipped"}, outcomes
    table = catalog.load_table(f"{ns}.stream")
    assert sorted(r["id"] for r in table.scan().to_arrow().to_pylist()) == list(range(batches * 10))
    final = run_now(server, arn, "icebergSnapshotManagement")
    assert final["outcome"] == "Successful", final
    assert len(catalog.load_table(f"{ns}.stream").metadata.snapshots) == 1


@pytest.fixture(scope="module")
def working_server(tmp_path_factory):
    """A server whose workers poll often and run no sweep: only commit triggers queue jobs."""
    srv = TablebayServer(tmp_path_factory.mktemp("tablebay-maint-workers"), arn_flavor="aws",
                         extra_args=("--maintenance-workers", "1", "--maintenance-poll-seconds", "0.2",
                                     "--maintenance-sweep-seconds", "0"))
    srv.start()
    yield srv
    srv.stop()


def test_a_commit_that_leaves_expired_snapshots_queues_expiration(working_server):
    from tablebay_test.clients import make_client

    s3tables_w = make_client(working_server.tables_url)
    name = unique("bkt")
    barn = s3tables_w.create_table_bucket(name=name)["arn"]
    cat = rest_catalog(working_server, barn)
    cat.create_namespace("ns")
    table = cat.create_table("ns.t", schema=SCHEMA, properties={
        "history.expire.min-snapshots-to-keep": "2", "history.expire.max-snapshot-age-ms": "1"})
    # The third append leaves 3 snapshots (more than 2) with the oldest past the age limit: it queues a job.
    for i in range(3):
        table.append(rows([i]))
    arn = table_arn(s3tables_w, barn, "ns", "t")
    deadline = time.monotonic() + 60
    while True:
        listed = signed_request(working_server.tables_url, "GET",
                                f"/admin/maintenance/runs?tableArn={quote_arn(arn)}").json()["runs"]
        expired = [r for r in listed if r["type"] == "icebergSnapshotManagement" and r["trigger"] == "commit"
                   and r["outcome"] == "Successful" and r["details"].get("snapshotsExpired", 0) > 0]
        snapshots = len(cat.load_table("ns.t").metadata.snapshots)
        if expired and snapshots == 2:
            break
        assert time.monotonic() < deadline, (listed, snapshots)
        time.sleep(0.2)
    assert sorted(r["id"] for r in cat.load_table("ns.t").scan().to_arrow().to_pylist()) == [0, 1, 2]
    status = job_status(s3tables_w, barn, "ns", "t")["icebergSnapshotManagement"]
    assert status["status"] == "Successful", status
