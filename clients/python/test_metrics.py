"""Bucket metrics configuration: Put/Get/Delete TableBucketMetricsConfiguration
(reference/s3tables-api.md §2 "Metrics"; PUT has no body and no Content-Type, §1.3), and what it turns on: the
per-table series at `/metrics` (docs/metrics.md), checked against counts made here independently — the commits
this test made, the files and records PyIceberg sees, the bytes boto3 sent and received, the sizes of the files
compaction replaced.

The module's server runs no maintenance workers and no sweep, so nothing but this test commits or moves bytes.
"""

import re
from urllib.parse import urlsplit

import pyarrow as pa
import pytest
from pyiceberg.schema import Schema
from pyiceberg.types import LongType, NestedField, StringType

from tablebay_test.expect import api_error, bucket_arn, status, unique
from tablebay_test.iceberg import (catalog_prefix, data_plane_missing, iceberg_request, rest_catalog, s3_client,
                                  split_s3_location)
from tablebay_test.server import TablebayServer
from tablebay_test.signing import signed_request

SCHEMA = Schema(NestedField(1, "id", LongType(), required=True), NestedField(2, "note", StringType(), required=False))
ARROW = pa.schema([pa.field("id", pa.int64(), nullable=False), pa.field("note", pa.string(), nullable=True)])
APPENDS = 4
ROWS_PER_APPEND = 25


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    srv = TablebayServer(tmp_path_factory.mktemp("tablebay-metrics"), arn_flavor="aws",
                         extra_args=("--maintenance-workers", "0", "--maintenance-sweep-seconds", "0"))
    srv.start()
    yield srv
    srv.stop()


def test_metrics_configuration_lifecycle(s3tables, bucket):
    with api_error("NotFoundException", 404):
        s3tables.get_table_bucket_metrics_configuration(tableBucketARN=bucket.arn)

    sent = []

    def record(request, **_):
        sent.append((request.method, urlsplit(request.url).path, request.body, dict(request.headers)))

    s3tables.meta.events.register("before-send.s3tables.PutTableBucketMetricsConfiguration", record)
    try:
        put = s3tables.put_table_bucket_metrics_configuration(tableBucketARN=bucket.arn)
    finally:
        s3tables.meta.events.unregister("before-send.s3tables.PutTableBucketMetricsConfiguration", record)
    assert status(put) == 204
    [(method, path, body, headers)] = sent
    assert method == "PUT" and path.endswith("/metrics") and not body
    assert "Content-Type" not in headers

    got = s3tables.get_table_bucket_metrics_configuration(tableBucketARN=bucket.arn)
    assert status(got) == 200
    assert got["tableBucketARN"] == bucket.arn
    if "id" in got:
        assert isinstance(got["id"], str) and got["id"]

    assert status(s3tables.delete_table_bucket_metrics_configuration(tableBucketARN=bucket.arn)) == 204
    with api_error("NotFoundException", 404):
        s3tables.get_table_bucket_metrics_configuration(tableBucketARN=bucket.arn)


def test_metrics_of_missing_bucket(s3tables):
    missing = bucket_arn(unique("nobkt"))
    with api_error("NotFoundException", 404):
        s3tables.put_table_bucket_metrics_configuration(tableBucketARN=missing)
    with api_error("NotFoundException", 404):
        s3tables.get_table_bucket_metrics_configuration(tableBucketARN=missing)


def scrape(server) -> dict[tuple[str, frozenset], float]:
    """`/metrics` as {(series name, labels): value}."""
    resp = signed_request(server.tables_url, "GET", "/metrics", sign=False)
    assert resp.status_code == 200, resp.text
    out = {}
    for line in resp.text.splitlines():
        if not line or line.startswith("#"):
            continue
        m = re.fullmatch(r'([a-z_]+)(?:\{(.*)\})? (\S+)', line)
        assert m, line
        labels = frozenset(re.findall(r'([a-z_]+)="((?:[^"\\]|\\.)*)"', m.group(2) or ""))
        out[(m.group(1), labels)] = float(m.group(3))
    return out


def table_series(series, bucket: str, namespace: str | None = None, table: str | None = None) -> dict:
    """The `tablebay_table_*` series of one bucket (and table), keyed by (name, extra labels)."""
    out = {}
    for (name, labels), value in series.items():
        found = dict(labels)
        if not name.startswith("tablebay_table_") or found.get("bucket") != bucket:
            continue
        if table is not None and (found.get("namespace"), found.get("table")) != (namespace, table):
            continue
        extra = tuple(sorted((k, v) for k, v in found.items() if k not in ("bucket", "namespace", "table")))
        out[(name, extra)] = value
    return out


def rows(start: int) -> pa.Table:
    ids = list(range(start, start + ROWS_PER_APPEND))
    return pa.Table.from_pydict({"id": ids, "note": [f"row-{i}" for i in ids]}, schema=ARROW)


def files_of(table) -> tuple[int, int, int]:
    """(data files, bytes, records) of the current snapshot, from PyIceberg's own reading of the manifests."""
    files = table.inspect.files().to_pylist()
    data = [f for f in files if f["content"] == 0]
    return len(data), sum(f["file_size_in_bytes"] for f in data), sum(f["record_count"] for f in data)


def test_table_series_follow_the_configuration(server, s3tables):
    if data_plane_missing(server):
        pytest.skip(data_plane_missing(server))
    watched, quiet = unique("bkt"), unique("bkt")
    watched_arn = s3tables.create_table_bucket(name=watched)["arn"]
    quiet_arn = s3tables.create_table_bucket(name=quiet)["arn"]
    assert status(s3tables.put_table_bucket_metrics_configuration(tableBucketARN=watched_arn)) == 204

    ns = unique("ns", "_")
    catalog, other = rest_catalog(server, watched_arn), rest_catalog(server, quiet_arn, name="quiet")
    catalog.create_namespace(ns)
    other.create_namespace(ns)
    table = catalog.create_table(f"{ns}.events", schema=SCHEMA)
    unwatched = other.create_table(f"{ns}.events", schema=SCHEMA)
    assert table_series(scrape(server), watched, ns, "events")[("tablebay_table_commits_total", ())] == 0

    for i in range(APPENDS):
        table.append(rows(i * ROWS_PER_APPEND))
        unwatched.append(rows(i * ROWS_PER_APPEND))
    # One refused commit: a requirement that does not hold (another table's uuid) is a real conflict, a 409.
    refused = iceberg_request(server, "POST", f"/v1/{catalog_prefix(server, watched_arn)}/namespaces/{ns}/tables/events",
                              {"requirements": [{"type": "assert-table-uuid", "uuid": str(unwatched.metadata.table_uuid)}],
                               "updates": [{"action": "set-properties", "updates": {"k": "v"}}]})
    assert refused.status_code == 409, refused.text

    table = catalog.load_table(f"{ns}.events")
    files, size, records = files_of(table)
    assert (files, records) == (APPENDS, APPENDS * ROWS_PER_APPEND)
    seen = table_series(scrape(server), watched, ns, "events")
    assert seen[("tablebay_table_data_files", ())] == files
    assert seen[("tablebay_table_data_bytes", ())] == size
    assert seen[("tablebay_table_records", ())] == records
    assert seen[("tablebay_table_snapshots", ())] == len(table.metadata.snapshots) == APPENDS
    assert seen[("tablebay_table_commits_total", ())] == APPENDS
    assert seen[("tablebay_table_commit_failures_total", ())] == 1

    # Data-plane bytes: what boto3 puts into and gets from the table's storage, nothing else moving meanwhile.
    s3 = s3_client(server)
    storage, prefix = split_s3_location(table.location())
    payload = bytes(range(256)) * 40
    before = seen
    s3.put_object(Bucket=storage, Key=f"{prefix}/extra/blob.bin".lstrip("/"), Body=payload)
    got = s3.get_object(Bucket=storage, Key=f"{prefix}/extra/blob.bin".lstrip("/"))["Body"].read()
    partial = s3.get_object(Bucket=storage, Key=f"{prefix}/extra/blob.bin".lstrip("/"), Range="bytes=0-99")
    assert got == payload and len(partial["Body"].read()) == 100
    after = table_series(scrape(server), watched, ns, "events")
    moved = {d: after[("tablebay_table_data_plane_bytes_total", (("direction", d),))]
             - before[("tablebay_table_data_plane_bytes_total", (("direction", d),))] for d in ("in", "out")}
    assert moved == {"in": len(payload), "out": len(payload) + 100}

    # Compaction run now: the bytes it rewrote are the files PyIceberg listed; saved is what it did not write back.
    resp = signed_request(server.tables_url, "POST", "/admin/maintenance/run",
                          {"tableArn": s3tables.get_table(tableBucketARN=watched_arn, namespace=ns,
                                                          name="events")["tableARN"],
                           "type": "icebergCompaction"})
    assert resp.status_code == 200, resp.text
    assert resp.json()["outcome"] == "Successful", resp.json()
    table = catalog.load_table(f"{ns}.events")
    files_after, size_after, records_after = files_of(table)
    assert files_after == 1 and records_after == records
    seen = table_series(scrape(server), watched, ns, "events")
    compaction = (("type", "icebergCompaction"),)
    assert seen[("tablebay_table_maintenance_bytes_rewritten_total", compaction)] == size
    assert seen[("tablebay_table_maintenance_bytes_saved_total", compaction)] == max(size - size_after, 0)
    assert seen[("tablebay_table_maintenance_bytes_rewritten_total", (("type", "icebergRecordExpiration"),))] == 0
    assert seen[("tablebay_table_data_files", ())] == files_after
    assert seen[("tablebay_table_data_bytes", ())] == size_after
    assert seen[("tablebay_table_snapshots", ())] == len(table.metadata.snapshots) == APPENDS + 1
    assert seen[("tablebay_table_commits_total", ())] == APPENDS + 1  # the compaction's commit is one too

    # A bucket without the configuration never had series; a dropped table's series go; deleting the
    # configuration removes the bucket's.
    assert table_series(scrape(server), quiet) == {}
    catalog.create_table(f"{ns}.gone", schema=SCHEMA)
    assert table_series(scrape(server), watched, ns, "gone")
    catalog.drop_table(f"{ns}.gone")
    assert table_series(scrape(server), watched, ns, "gone") == {}
    assert status(s3tables.delete_table_bucket_metrics_configuration(tableBucketARN=watched_arn)) == 204
    assert table_series(scrape(server), watched) == {}
    assert table_series(scrape(server), quiet) == {}
