"""Table buckets: CreateTableBucket, GetTableBucket, ListTableBuckets, DeleteTableBucket
(reference/s3tables-api.md §2 "Table buckets", §1.4 wire format)."""

from tablebay_test import ACCOUNT_ID
from tablebay_test.expect import (
    api_error, assert_recent, assert_wire_timestamp, bucket_arn, purge_bucket, status, unique,
)
from tablebay_test.signing import quote_arn


def test_create_get_delete_bucket(s3tables):
    name = unique("bkt")
    created = s3tables.create_table_bucket(name=name)
    assert status(created) == 200
    assert created["arn"] == f"arn:aws:s3tables:us-east-1:{ACCOUNT_ID}:bucket/{name}"

    got = s3tables.get_table_bucket(tableBucketARN=created["arn"])
    assert status(got) == 200
    assert got["arn"] == created["arn"]
    assert got["name"] == name
    assert got["ownerAccountId"] == ACCOUNT_ID
    assert_recent(got["createdAt"])
    assert got.get("type", "customer") == "customer"

    deleted = s3tables.delete_table_bucket(tableBucketARN=created["arn"])
    assert status(deleted) == 204
    with api_error("NotFoundException", 404):
        s3tables.get_table_bucket(tableBucketARN=created["arn"])
    listed = s3tables.list_table_buckets(prefix=name)["tableBuckets"]
    assert listed == []


def test_create_existing_bucket_is_conflict(s3tables, bucket):
    with api_error("ConflictException", 409):
        s3tables.create_table_bucket(name=bucket.name)
    listed = s3tables.list_table_buckets(prefix=bucket.name)["tableBuckets"]
    assert [b["arn"] for b in listed] == [bucket.arn]


def test_name_is_reusable_after_delete(s3tables):
    name = unique("bkt")
    arn = s3tables.create_table_bucket(name=name)["arn"]
    first = s3tables.get_table_bucket(tableBucketARN=arn)
    s3tables.delete_table_bucket(tableBucketARN=arn)
    again = s3tables.create_table_bucket(name=name)
    assert again["arn"] == arn
    second = s3tables.get_table_bucket(tableBucketARN=arn)
    assert second["createdAt"] >= first["createdAt"]
    if "tableBucketId" in first and "tableBucketId" in second:
        assert first["tableBucketId"] != second["tableBucketId"]
    s3tables.delete_table_bucket(tableBucketARN=arn)


def test_list_table_buckets_summary_members(s3tables, bucket):
    resp = s3tables.list_table_buckets(prefix=bucket.name)
    assert status(resp) == 200
    [summary] = resp["tableBuckets"]
    assert summary["arn"] == bucket.arn
    assert summary["name"] == bucket.name
    assert summary["ownerAccountId"] == ACCOUNT_ID
    assert_recent(summary["createdAt"])
    assert summary.get("type", "customer") == "customer"
    assert "continuationToken" not in resp


def test_list_table_buckets_prefix(s3tables):
    stem = unique("pfx")
    names = [f"{stem}-a", f"{stem}-b", f"{stem}x-c"]
    for n in names:
        s3tables.create_table_bucket(name=n)
    try:
        assert sorted(b["name"] for b in s3tables.list_table_buckets(prefix=f"{stem}-")["tableBuckets"]) \
            == names[:2]
        assert sorted(b["name"] for b in s3tables.list_table_buckets(prefix=stem)["tableBuckets"]) == names
        assert s3tables.list_table_buckets(prefix=f"{stem}-z")["tableBuckets"] == []
        everything = [b["name"] for b in s3tables.list_table_buckets()["tableBuckets"]]
        assert set(names) <= set(everything)
    finally:
        for n in names:
            purge_bucket(s3tables, bucket_arn(n))


def test_list_table_buckets_type_filter(s3tables, bucket):
    customer = s3tables.list_table_buckets(prefix=bucket.name, type="customer")["tableBuckets"]
    assert [b["arn"] for b in customer] == [bucket.arn]
    assert s3tables.list_table_buckets(prefix=bucket.name, type="aws")["tableBuckets"] == []


def test_missing_bucket_is_not_found(s3tables):
    missing = bucket_arn(unique("nobkt"))
    with api_error("NotFoundException", 404):
        s3tables.get_table_bucket(tableBucketARN=missing)
    with api_error("NotFoundException", 404):
        s3tables.delete_table_bucket(tableBucketARN=missing)


def test_delete_non_empty_bucket_is_conflict(s3tables, bucket):
    s3tables.create_namespace(tableBucketARN=bucket.arn, namespace=["inside"])
    with api_error("ConflictException", 409):
        s3tables.delete_table_bucket(tableBucketARN=bucket.arn)
    assert s3tables.get_table_bucket(tableBucketARN=bucket.arn)["arn"] == bucket.arn
    s3tables.delete_namespace(tableBucketARN=bucket.arn, namespace="inside")
    assert status(s3tables.delete_table_bucket(tableBucketARN=bucket.arn)) == 204


def test_get_bucket_wire_format(raw, bucket):
    resp = raw("GET", f"/buckets/{quote_arn(bucket.arn)}")
    assert resp.status_code == 200, resp.text
    assert resp.headers["Content-Type"] == "application/json"
    body = resp.json()
    assert body["arn"] == bucket.arn
    assert body["name"] == bucket.name
    assert body["ownerAccountId"] == ACCOUNT_ID
    assert_wire_timestamp(body["createdAt"])


def test_bucket_arn_with_raw_colons_in_path(raw, bucket):
    # §1.3: clients percent-encode the ARN label; a raw `:` must be accepted as well.
    resp = raw("GET", "/buckets/" + bucket.arn.replace("/", "%2F"))
    assert resp.status_code == 200, resp.text
    assert resp.json()["arn"] == bucket.arn


def test_create_bucket_wire_format(raw, s3tables):
    name = unique("bkt")
    resp = raw("PUT", "/buckets", {"name": name})
    try:
        assert resp.status_code == 200, resp.text
        assert resp.headers["Content-Type"] == "application/json"
        assert resp.json() == {"arn": bucket_arn(name)}
    finally:
        purge_bucket(s3tables, bucket_arn(name))
