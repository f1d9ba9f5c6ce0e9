"""Namespaces: CreateNamespace, GetNamespace, ListNamespaces, DeleteNamespace
(reference/s3tables-api.md §2 "Namespaces")."""

from tablebay_test import ACCOUNT_ID
from tablebay_test.expect import api_error, assert_recent, bucket_arn, purge_bucket, status, unique


def test_create_get_delete_namespace(s3tables, bucket):
    created = s3tables.create_namespace(tableBucketARN=bucket.arn, namespace=["sales"])
    assert status(created) == 200
    assert created["tableBucketARN"] == bucket.arn
    assert created["namespace"] == ["sales"]

    got = s3tables.get_namespace(tableBucketARN=bucket.arn, namespace="sales")
    assert status(got) == 200
    assert got["namespace"] == ["sales"]
    assert got["createdBy"] == ACCOUNT_ID
    assert got["ownerAccountId"] == ACCOUNT_ID
    assert_recent(got["createdAt"])
    for optional in ("namespaceId", "tableBucketId"):
        if optional in got:
            assert isinstance(got[optional], str) and got[optional]

    deleted = s3tables.delete_namespace(tableBucketARN=bucket.arn, namespace="sales")
    assert status(deleted) == 204
    with api_error("NotFoundException", 404):
        s3tables.get_namespace(tableBucketARN=bucket.arn, namespace="sales")
    assert s3tables.list_namespaces(tableBucketARN=bucket.arn)["namespaces"] == []


def test_list_namespaces_summary_and_prefix(s3tables, bucket):
    for ns in ("sales_eu", "sales_us", "hr"):
        s3tables.create_namespace(tableBucketARN=bucket.arn, namespace=[ns])
    resp = s3tables.list_namespaces(tableBucketARN=bucket.arn)
    assert status(resp) == 200
    assert sorted(n["namespace"][0] for n in resp["namespaces"]) == ["hr", "sales_eu", "sales_us"]
    assert "continuationToken" not in resp
    for summary in resp["namespaces"]:
        assert len(summary["namespace"]) == 1
        assert summary["createdBy"] == ACCOUNT_ID
        assert summary["ownerAccountId"] == ACCOUNT_ID
        assert_recent(summary["createdAt"])
    by_prefix = s3tables.list_namespaces(tableBucketARN=bucket.arn, prefix="sales")["namespaces"]
    assert sorted(n["namespace"][0] for n in by_prefix) == ["sales_eu", "sales_us"]
    assert s3tables.list_namespaces(tableBucketARN=bucket.arn, prefix="zzz")["namespaces"] == []


def test_create_existing_namespace_is_conflict(s3tables, namespace):
    with api_error("ConflictException", 409):
        s3tables.create_namespace(tableBucketARN=namespace.bucket.arn, namespace=[namespace.name])
    listed = s3tables.list_namespaces(tableBucketARN=namespace.bucket.arn)["namespaces"]
    assert [n["namespace"] for n in listed] == [[namespace.name]]


def test_namespace_in_missing_bucket_is_not_found(s3tables):
    missing = bucket_arn(unique("nobkt"))
    with api_error("NotFoundException", 404):
        s3tables.create_namespace(tableBucketARN=missing, namespace=["ns1"])
    with api_error("NotFoundException", 404):
        s3tables.get_namespace(tableBucketARN=missing, namespace="ns1")
    with api_error("NotFoundException", 404):
        s3tables.list_namespaces(tableBucketARN=missing)
    with api_error("NotFoundException", 404):
        s3tables.delete_namespace(tableBucketARN=missing, namespace="ns1")


def test_missing_namespace_is_not_found(s3tables, bucket):
    with api_error("NotFoundException", 404):
        s3tables.get_namespace(tableBucketARN=bucket.arn, namespace="absent")
    with api_error("NotFoundException", 404):
        s3tables.delete_namespace(tableBucketARN=bucket.arn, namespace="absent")


def test_delete_non_empty_namespace_is_conflict(s3tables, namespace):
    arn = namespace.bucket.arn
    s3tables.create_table(tableBucketARN=arn, namespace=namespace.name, name="t1", format="ICEBERG")
    with api_error("ConflictException", 409):
        s3tables.delete_namespace(tableBucketARN=arn, namespace=namespace.name)
    assert s3tables.get_namespace(tableBucketARN=arn, namespace=namespace.name)["namespace"] == [namespace.name]
    s3tables.delete_table(tableBucketARN=arn, namespace=namespace.name, name="t1")
    assert status(s3tables.delete_namespace(tableBucketARN=arn, namespace=namespace.name)) == 204


def test_namespaces_are_per_bucket(s3tables, namespace):
    other = unique("bkt")
    other_arn = s3tables.create_table_bucket(name=other)["arn"]
    try:
        with api_error("NotFoundException", 404):
            s3tables.get_namespace(tableBucketARN=other_arn, namespace=namespace.name)
        assert s3tables.list_namespaces(tableBucketARN=other_arn)["namespaces"] == []
        # The same name may exist in another bucket.
        s3tables.create_namespace(tableBucketARN=other_arn, namespace=[namespace.name])
        assert s3tables.get_namespace(tableBucketARN=other_arn, namespace=namespace.name)["namespace"] \
            == [namespace.name]
    finally:
        purge_bucket(s3tables, other_arn)
