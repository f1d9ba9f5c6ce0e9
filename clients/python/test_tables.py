"""Tables: CreateTable, GetTable (both routes), ListTables, DeleteTable, RenameTable
(reference/s3tables-api.md §2 "Tables", §3.4 identifier formats, §5 GetTable)."""

import re
from urllib.parse import parse_qs, urlsplit

from tablebay_test import ACCOUNT_ID
from tablebay_test.expect import (
    WAREHOUSE_RE, api_error, assert_recent, assert_wire_timestamp, bucket_arn, metadata_location_re,
    new_metadata_location, status, table_arn_re, unique,
)
from tablebay_test.samples import METADATA_SCHEMA_V2
from tablebay_test.signing import quote_arn

GET_TABLE_REQUIRED = ("name", "type", "tableARN", "namespace", "versionToken", "warehouseLocation",
                      "createdAt", "createdBy", "modifiedAt", "modifiedBy", "ownerAccountId", "format")


def rotate_token(s3tables, t, token):
    """Commits a new metadata location so that `token` goes stale; returns the new token."""
    loc = s3tables.get_table_metadata_location(tableBucketARN=t.bucket_arn, namespace=t.namespace, name=t.name)
    resp = s3tables.update_table_metadata_location(
        tableBucketARN=t.bucket_arn, namespace=t.namespace, name=t.name, versionToken=token,
        metadataLocation=new_metadata_location(loc["warehouseLocation"]))
    assert resp["versionToken"] != token
    return resp["versionToken"]


def test_create_table_response(s3tables, namespace):
    resp = s3tables.create_table(tableBucketARN=namespace.bucket.arn, namespace=namespace.name,
                                 name="orders", format="ICEBERG")
    assert status(resp) == 200
    assert table_arn_re(namespace.bucket.arn).match(resp["tableARN"]), resp["tableARN"]
    assert isinstance(resp["versionToken"], str) and resp["versionToken"]


def test_get_table_by_name(s3tables, table):
    got = s3tables.get_table(tableBucketARN=table.bucket_arn, namespace=table.namespace, name=table.name)
    assert status(got) == 200
    missing = [m for m in GET_TABLE_REQUIRED if m not in got]
    assert not missing, f"GetTable lacks required members {missing}"
    assert got["name"] == table.name
    assert got["namespace"] == [table.namespace]
    assert got["tableARN"] == table.arn
    assert got["type"] == "customer"
    assert got["format"] == "ICEBERG"
    assert got["versionToken"] == table.version_token
    warehouse = WAREHOUSE_RE.match(got["warehouseLocation"])
    assert warehouse, got["warehouseLocation"]
    # DESIGN.md: every table owns the storage location s3://<table-uuid>--table-s3.
    assert warehouse.group(1) == table_arn_re(table.bucket_arn).match(table.arn).group(1)
    assert got["createdBy"] == got["modifiedBy"] == got["ownerAccountId"] == ACCOUNT_ID
    assert_recent(got["createdAt"])
    assert_recent(got["modifiedAt"])
    assert got["modifiedAt"] >= got["createdAt"]
    assert "metadataLocation" not in got, "a table created without metadata has no metadata location"


def test_get_table_by_arn(s3tables, table):
    by_name = s3tables.get_table(tableBucketARN=table.bucket_arn, namespace=table.namespace, name=table.name)
    by_arn = s3tables.get_table(tableArn=table.arn)
    for member in GET_TABLE_REQUIRED:
        assert by_arn[member] == by_name[member], member


def test_boto3_sends_the_get_table_route(s3tables, table):
    # botocore >= 1.38.32 sends GET /get-table?… (reference §1.3); record what went on the wire.
    seen = []

    def record(request, **_):
        seen.append((request.method, request.url))

    s3tables.meta.events.register("before-send.s3tables.GetTable", record)
    try:
        s3tables.get_table(tableBucketARN=table.bucket_arn, namespace=table.namespace, name=table.name)
        s3tables.get_table(tableArn=table.arn)
    finally:
        s3tables.meta.events.unregister("before-send.s3tables.GetTable", record)
    (m1, u1), (m2, u2) = seen
    assert (m1, urlsplit(u1).path) == ("GET", "/get-table")
    assert parse_qs(urlsplit(u1).query) == {"tableBucketARN": [table.bucket_arn], "namespace": [table.namespace],
                                            "name": [table.name]}
    assert (m2, urlsplit(u2).path) == ("GET", "/get-table")
    assert parse_qs(urlsplit(u2).query) == {"tableArn": [table.arn]}


def test_get_table_legacy_route(raw, table):
    # botocore <= 1.38.31 sends GET /tables/{tableBucketARN}/{namespace}/{name}.
    resp = raw("GET", f"/tables/{quote_arn(table.bucket_arn)}/{table.namespace}/{table.name}")
    assert resp.status_code == 200, resp.text
    assert resp.headers["Content-Type"] == "application/json"
    body = resp.json()
    assert body["tableARN"] == table.arn
    assert body["name"] == table.name
    assert body["namespace"] == [table.namespace]
    assert body["versionToken"] == table.version_token
    assert body["format"] == "ICEBERG"
    assert WAREHOUSE_RE.match(body["warehouseLocation"])
    assert_wire_timestamp(body["createdAt"])
    assert_wire_timestamp(body["modifiedAt"])


def test_get_table_wire_timestamps(raw, table):
    resp = raw("GET", f"/get-table?tableArn={quote_arn(table.arn)}")
    assert resp.status_code == 200, resp.text
    assert_wire_timestamp(resp.json()["createdAt"])
    assert_wire_timestamp(resp.json()["modifiedAt"])


def test_tables_have_distinct_ids_and_warehouses(s3tables, namespace):
    arn = namespace.bucket.arn
    a = s3tables.create_table(tableBucketARN=arn, namespace=namespace.name, name="a", format="ICEBERG")
    b = s3tables.create_table(tableBucketARN=arn, namespace=namespace.name, name="b", format="ICEBERG")
    assert a["tableARN"] != b["tableARN"]
    wa = s3tables.get_table(tableArn=a["tableARN"])["warehouseLocation"]
    wb = s3tables.get_table(tableArn=b["tableARN"])["warehouseLocation"]
    assert wa != wb
    assert WAREHOUSE_RE.match(wa) and WAREHOUSE_RE.match(wb)


def test_create_table_with_schema_v2_metadata(s3tables, namespace):
    arn = namespace.bucket.arn
    resp = s3tables.create_table(tableBucketARN=arn, namespace=namespace.name, name="nested", format="ICEBERG",
                                 metadata=METADATA_SCHEMA_V2)
    got = s3tables.get_table(tableArn=resp["tableARN"])
    assert metadata_location_re(got["warehouseLocation"]).match(got["metadataLocation"]), got
    assert got["versionToken"] == resp["versionToken"]


def test_list_tables(s3tables, namespace):
    arn = namespace.bucket.arn
    s3tables.create_namespace(tableBucketARN=arn, namespace=["other"])
    made = {}
    for ns, name in ((namespace.name, "orders"), (namespace.name, "order_lines"), (namespace.name, "users"),
                     ("other", "orders")):
        made[(ns, name)] = s3tables.create_table(tableBucketARN=arn, namespace=ns, name=name,
                                                 format="ICEBERG")["tableARN"]

    in_ns = s3tables.list_tables(tableBucketARN=arn, namespace=namespace.name)
    assert status(in_ns) == 200
    assert "continuationToken" not in in_ns
    assert sorted(t["name"] for t in in_ns["tables"]) == ["order_lines", "orders", "users"]
    for t in in_ns["tables"]:
        assert t["namespace"] == [namespace.name]
        assert t["tableARN"] == made[(namespace.name, t["name"])]
        assert t["type"] == "customer"
        assert_recent(t["createdAt"])
        assert_recent(t["modifiedAt"])

    everywhere = s3tables.list_tables(tableBucketARN=arn)["tables"]
    assert sorted((t["namespace"][0], t["name"]) for t in everywhere) == sorted(made)

    by_prefix = s3tables.list_tables(tableBucketARN=arn, namespace=namespace.name, prefix="order")["tables"]
    assert sorted(t["name"] for t in by_prefix) == ["order_lines", "orders"]
    all_orders = s3tables.list_tables(tableBucketARN=arn, prefix="orders")["tables"]
    assert sorted(t["namespace"][0] for t in all_orders) == sorted([namespace.name, "other"])


def test_list_tables_of_missing_namespace_or_bucket(s3tables, bucket):
    with api_error("NotFoundException", 404):
        s3tables.list_tables(tableBucketARN=bucket_arn(unique("nobkt")))
    with api_error("NotFoundException", 404):
        s3tables.list_tables(tableBucketARN=bucket.arn, namespace="absent")


def test_create_existing_table_is_conflict(s3tables, table):
    with api_error("ConflictException", 409):
        s3tables.create_table(tableBucketARN=table.bucket_arn, namespace=table.namespace, name=table.name,
                              format="ICEBERG")
    got = s3tables.get_table(tableBucketARN=table.bucket_arn, namespace=table.namespace, name=table.name)
    assert got["tableARN"] == table.arn and got["versionToken"] == table.version_token


def test_create_table_in_missing_namespace_or_bucket(s3tables, bucket):
    with api_error("NotFoundException", 404):
        s3tables.create_table(tableBucketARN=bucket.arn, namespace="absent", name="t", format="ICEBERG")
    with api_error("NotFoundException", 404):
        s3tables.create_table(tableBucketARN=bucket_arn(unique("nobkt")), namespace="ns", name="t",
                              format="ICEBERG")
    assert s3tables.list_tables(tableBucketARN=bucket.arn)["tables"] == []


def test_missing_table_is_not_found(s3tables, table):
    with api_error("NotFoundException", 404):
        s3tables.get_table(tableBucketARN=table.bucket_arn, namespace=table.namespace, name="absent")
    unknown = re.sub(r"/table/.*$", "/table/00000000-0000-4000-8000-000000000000", table.arn)
    with api_error("NotFoundException", 404):
        s3tables.get_table(tableArn=unknown)
    with api_error("NotFoundException", 404):
        s3tables.delete_table(tableBucketARN=table.bucket_arn, namespace=table.namespace, name="absent")


def test_delete_table(s3tables, table):
    resp = s3tables.delete_table(tableBucketARN=table.bucket_arn, namespace=table.namespace, name=table.name)
    assert status(resp) == 204
    with api_error("NotFoundException", 404):
        s3tables.get_table(tableBucketARN=table.bucket_arn, namespace=table.namespace, name=table.name)
    with api_error("NotFoundException", 404):
        s3tables.get_table(tableArn=table.arn)
    assert s3tables.list_tables(tableBucketARN=table.bucket_arn)["tables"] == []


def test_delete_table_with_version_token(s3tables, table):
    current = rotate_token(s3tables, table, table.version_token)
    with api_error("ConflictException", 409):
        s3tables.delete_table(tableBucketARN=table.bucket_arn, namespace=table.namespace, name=table.name,
                              versionToken=table.version_token)
    with api_error("ConflictException", 409):
        s3tables.delete_table(tableBucketARN=table.bucket_arn, namespace=table.namespace, name=table.name,
                              versionToken="not-a-token-of-this-table")
    assert s3tables.get_table(tableArn=table.arn)["versionToken"] == current
    resp = s3tables.delete_table(tableBucketARN=table.bucket_arn, namespace=table.namespace, name=table.name,
                                 versionToken=current)
    assert status(resp) == 204
    with api_error("NotFoundException", 404):
        s3tables.get_table(tableArn=table.arn)


def test_rename_table_keeps_arn_and_warehouse(s3tables, table):
    before = s3tables.get_table(tableArn=table.arn)
    resp = s3tables.rename_table(tableBucketARN=table.bucket_arn, namespace=table.namespace, name=table.name,
                                 newName="renamed")
    assert status(resp) == 204
    after = s3tables.get_table(tableBucketARN=table.bucket_arn, namespace=table.namespace, name="renamed")
    assert after["tableARN"] == table.arn
    assert after["name"] == "renamed"
    assert after["warehouseLocation"] == before["warehouseLocation"]
    assert after["createdAt"] == before["createdAt"]
    with api_error("NotFoundException", 404):
        s3tables.get_table(tableBucketARN=table.bucket_arn, namespace=table.namespace, name=table.name)
    assert [t["name"] for t in s3tables.list_tables(tableBucketARN=table.bucket_arn)["tables"]] == ["renamed"]
    assert s3tables.get_table(tableArn=table.arn)["name"] == "renamed"


def test_rename_table_to_other_namespace(s3tables, table):
    s3tables.create_namespace(tableBucketARN=table.bucket_arn, namespace=["archive"])
    s3tables.rename_table(tableBucketARN=table.bucket_arn, namespace=table.namespace, name=table.name,
                          newNamespaceName="archive")
    moved = s3tables.get_table(tableBucketARN=table.bucket_arn, namespace="archive", name=table.name)
    assert moved["tableARN"] == table.arn
    assert moved["namespace"] == ["archive"]
    assert s3tables.list_tables(tableBucketARN=table.bucket_arn, namespace=table.namespace)["tables"] == []
    s3tables.rename_table(tableBucketARN=table.bucket_arn, namespace="archive", name=table.name,
                          newNamespaceName=table.namespace, newName="both_changed")
    back = s3tables.get_table(tableArn=table.arn)
    assert (back["namespace"], back["name"]) == ([table.namespace], "both_changed")


def test_rename_table_version_token(s3tables, table):
    current = rotate_token(s3tables, table, table.version_token)
    with api_error("ConflictException", 409):
        s3tables.rename_table(tableBucketARN=table.bucket_arn, namespace=table.namespace, name=table.name,
                              newName="stale", versionToken=table.version_token)
    assert s3tables.get_table(tableArn=table.arn)["name"] == table.name
    s3tables.rename_table(tableBucketARN=table.bucket_arn, namespace=table.namespace, name=table.name,
                          newName="fresh", versionToken=current)
    assert s3tables.get_table(tableArn=table.arn)["name"] == "fresh"


def test_rename_table_conflicts_and_missing_targets(s3tables, table):
    s3tables.create_table(tableBucketARN=table.bucket_arn, namespace=table.namespace, name="taken",
                          format="ICEBERG")
    with api_error("ConflictException", 409):
        s3tables.rename_table(tableBucketARN=table.bucket_arn, namespace=table.namespace, name=table.name,
                              newName="taken")
    with api_error("NotFoundException", 404):
        s3tables.rename_table(tableBucketARN=table.bucket_arn, namespace=table.namespace, name=table.name,
                              newNamespaceName="absent")
    with api_error("NotFoundException", 404):
        s3tables.rename_table(tableBucketARN=table.bucket_arn, namespace=table.namespace, name="absent",
                              newName="whatever")
    names = sorted(t["name"] for t in s3tables.list_tables(tableBucketARN=table.bucket_arn)["tables"])
    assert names == sorted([table.name, "taken"])
