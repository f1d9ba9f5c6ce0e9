"""Server-side validation: botocore checks only required members, types and `min`, so every name
rule, length limit, ARN shape and enum of reference/s3tables-api.md §3 must be enforced by the server
with 400 BadRequestException (§1.7), and a rejected request changes nothing. Also the error wire
contract (§1.5) and malformed or oversized bodies."""

import json

import pytest

from tablebay_test.expect import api_error, assert_raw_error, bucket_arn, purge_bucket, status, unique
from tablebay_test.signing import quote_arn

BAD_BUCKET_NAMES = {
    "uppercase": "BadName",
    "too-long": "a" * 64,
    "underscore": "bad_name",
    "dot": "bad.name",
    "space": "bad name",
    "leading-hyphen": "-abc",
    "trailing-hyphen": "abc-",
    "prefix-xn--": "xn--abc",
    "prefix-sthree-": "sthree-abc",
    "prefix-amzn-s3-demo-": "amzn-s3-demo-abc",
    "prefix-aws": "awsbucket",
    "suffix--s3alias": "abc-s3alias",
    "suffix--ol-s3": "abc--ol-s3",
    "suffix--x-s3": "abc--x-s3",
    "suffix--table-s3": "abc--table-s3",
}

BAD_NAMESPACE_NAMES = {
    "uppercase": "Sales",
    "hyphen": "sales-eu",
    "dot": "sales.eu",
    "space": "sales eu",
    "leading-underscore": "_sales",
    "trailing-underscore": "sales_",
    "too-long": "a" * 256,
    "prefix-aws": "aws_sales",
}

BAD_TABLE_NAMES = {
    "uppercase": "Orders",
    "hyphen": "orders-2024",
    "dot": "orders.v2",
    "leading-underscore": "_orders",
    "trailing-underscore": "orders_",
    "too-long": "a" * 256,
}

BAD_BUCKET_ARNS = {
    "not-an-arn": "not-an-arn",
    "s3-bucket-arn": "arn:aws:s3:::some-bucket",
    "short-account": "arn:aws:s3tables:us-east-1:12345:bucket/abc",
    "no-bucket-name": "arn:aws:s3tables:us-east-1:111122223333:bucket/",
    "uppercase-name": "arn:aws:s3tables:us-east-1:111122223333:bucket/ABC",
    "table-arn": "arn:aws:s3tables:us-east-1:111122223333:bucket/abc/table/00000000-0000-4000-8000-000000000000",
}


@pytest.mark.parametrize("name", BAD_BUCKET_NAMES.values(), ids=BAD_BUCKET_NAMES.keys())
def test_invalid_bucket_name(s3tables, name):
    with api_error("BadRequestException", 400):
        s3tables.create_table_bucket(name=name)
    assert name not in [b["name"] for b in s3tables.list_table_buckets()["tableBuckets"]]


def test_too_short_bucket_name(raw, s3tables):
    # botocore refuses names under the model's min (3) client-side; send it raw.
    assert_raw_error(raw("PUT", "/buckets", {"name": "ab"}), 400, "BadRequestException")
    assert "ab" not in [b["name"] for b in s3tables.list_table_buckets()["tableBuckets"]]


@pytest.mark.parametrize("name", ["abc", "a1-" + "b" * 58 + "-9", "0" * 63], ids=["3-chars", "63-chars", "digits"])
def test_valid_edge_bucket_names(s3tables, name):
    try:
        assert s3tables.create_table_bucket(name=name)["arn"] == bucket_arn(name)
        assert s3tables.get_table_bucket(tableBucketARN=bucket_arn(name))["name"] == name
    finally:
        purge_bucket(s3tables, bucket_arn(name))


@pytest.mark.parametrize("name", BAD_NAMESPACE_NAMES.values(), ids=BAD_NAMESPACE_NAMES.keys())
def test_invalid_namespace_name(s3tables, bucket, name):
    with api_error("BadRequestException", 400):
        s3tables.create_namespace(tableBucketARN=bucket.arn, namespace=[name])
    assert s3tables.list_namespaces(tableBucketARN=bucket.arn)["namespaces"] == []


def test_namespace_list_must_have_one_element(s3tables, raw, bucket):
    with api_error("BadRequestException", 400):
        s3tables.create_namespace(tableBucketARN=bucket.arn, namespace=["level1", "level2"])
    assert_raw_error(raw("PUT", f"/namespaces/{quote_arn(bucket.arn)}", {"namespace": []}),
                     400, "BadRequestException")
    assert_raw_error(raw("PUT", f"/namespaces/{quote_arn(bucket.arn)}", {"namespace": "flat"}),
                     400, "BadRequestException")
    assert s3tables.list_namespaces(tableBucketARN=bucket.arn)["namespaces"] == []


@pytest.mark.parametrize("name", ["a", "z" * 255, "a_1"], ids=["1-char", "255-chars", "underscore-inside"])
def test_valid_edge_namespace_and_table_names(s3tables, bucket, name):
    s3tables.create_namespace(tableBucketARN=bucket.arn, namespace=[name])
    assert s3tables.get_namespace(tableBucketARN=bucket.arn, namespace=name)["namespace"] == [name]
    s3tables.create_table(tableBucketARN=bucket.arn, namespace=name, name=name, format="ICEBERG")
    assert s3tables.get_table(tableBucketARN=bucket.arn, namespace=name, name=name)["name"] == name


@pytest.mark.parametrize("name", BAD_TABLE_NAMES.values(), ids=BAD_TABLE_NAMES.keys())
def test_invalid_table_name(s3tables, table, name):
    ids = dict(tableBucketARN=table.bucket_arn, namespace=table.namespace)
    with api_error("BadRequestException", 400):
        s3tables.create_table(name=name, format="ICEBERG", **ids)
    with api_error("BadRequestException", 400):
        s3tables.rename_table(name=table.name, newName=name, **ids)
    assert [t["name"] for t in s3tables.list_tables(**ids)["tables"]] == [table.name]


def test_invalid_new_namespace_name_on_rename(s3tables, table):
    with api_error("BadRequestException", 400):
        s3tables.rename_table(tableBucketARN=table.bucket_arn, namespace=table.namespace, name=table.name,
                              newNamespaceName="Other-NS")
    assert s3tables.get_table(tableArn=table.arn)["namespace"] == [table.namespace]


@pytest.mark.parametrize("fmt", ["PARQUET", "iceberg", "DELTA"])
def test_unknown_table_format(s3tables, namespace, fmt):
    with api_error("BadRequestException", 400):
        s3tables.create_table(tableBucketARN=namespace.bucket.arn, namespace=namespace.name, name="t", format=fmt)
    assert s3tables.list_tables(tableBucketARN=namespace.bucket.arn)["tables"] == []


@pytest.mark.parametrize("arn", BAD_BUCKET_ARNS.values(), ids=BAD_BUCKET_ARNS.keys())
def test_invalid_bucket_arn(s3tables, arn):
    with api_error("BadRequestException", 400):
        s3tables.get_table_bucket(tableBucketARN=arn)
    with api_error("BadRequestException", 400):
        s3tables.list_namespaces(tableBucketARN=arn)
    with api_error("BadRequestException", 400):
        s3tables.create_namespace(tableBucketARN=arn, namespace=["ns"])


@pytest.mark.parametrize("arn", ["garbage", "arn:aws:s3tables:us-east-1:111122223333:bucket/abc",
                                 "arn:aws:s3tables:us-east-1:111122223333:bucket/abc/table/"],
                         ids=["garbage", "bucket-arn", "no-table-id"])
def test_invalid_table_arn(s3tables, arn):
    with api_error("BadRequestException", 400):
        s3tables.get_table(tableArn=arn)


def test_get_table_needs_exactly_one_identification(raw, table):
    b = quote_arn(table.bucket_arn)
    for query in ("",
                  f"?tableBucketARN={b}&namespace={table.namespace}",
                  f"?tableBucketARN={b}&name={table.name}",
                  f"?tableBucketARN={b}&namespace={table.namespace}&name={table.name}&tableArn={quote_arn(table.arn)}"):
        assert_raw_error(raw("GET", f"/get-table{query}"), 400, "BadRequestException")


def test_invalid_namespace_in_paths_and_queries(s3tables, bucket):
    with api_error("BadRequestException", 400):
        s3tables.get_namespace(tableBucketARN=bucket.arn, namespace="Bad-NS")
    with api_error("BadRequestException", 400):
        s3tables.list_tables(tableBucketARN=bucket.arn, namespace="Bad-NS")
    with api_error("BadRequestException", 400):
        s3tables.get_table(tableBucketARN=bucket.arn, namespace="Bad-NS", name="t")


def test_unknown_bucket_type_filter(s3tables):
    with api_error("BadRequestException", 400):
        s3tables.list_table_buckets(type="partner")


def test_prefix_too_long(s3tables, bucket):
    with api_error("BadRequestException", 400):
        s3tables.list_table_buckets(prefix="a" * 64)
    with api_error("BadRequestException", 400):
        s3tables.list_namespaces(tableBucketARN=bucket.arn, prefix="a" * 256)


@pytest.mark.parametrize("body", [
    '{"name": ',
    "not json at all",
    '["a", "b"]',
    '{"name": 42}',
    '{"name": null}',
    "{}",
    "",
], ids=["truncated", "not-json", "array", "number-name", "null-name", "missing-name", "empty"])
def test_malformed_create_bucket_body(raw, s3tables, body):
    before = s3tables.list_table_buckets()["tableBuckets"]
    assert_raw_error(raw("PUT", "/buckets", body), 400, "BadRequestException")
    assert s3tables.list_table_buckets()["tableBuckets"] == before


def test_malformed_create_table_body(raw, s3tables, namespace):
    path = f"/tables/{quote_arn(namespace.bucket.arn)}/{namespace.name}"
    for body in ('{"name": "t", "format": "ICEBERG", "metadata": {"iceberg": {"schema": {"fields": "x"}}}}',
                 '{"name": "t"}',
                 '{"name": "t", "format": "ICEBERG", "metadata": ',
                 '{"name": "t", "format": "ICEBERG", "metadata": {"iceberg": {"schema": {"fields": '
                 '[{"name": "id", "type": "no-such-type"}]}}}}'):
        assert_raw_error(raw("PUT", path, body), 400, "BadRequestException")
    assert s3tables.list_tables(tableBucketARN=namespace.bucket.arn)["tables"] == []


def test_oversized_body(raw, s3tables):
    name = unique("huge")
    body = json.dumps({"name": name, "tags": {"pad": "x" * 256}, "padding": "x" * (16 * 1024 * 1024)})
    resp = raw("PUT", "/buckets", body)
    assert_raw_error(resp, 400, "BadRequestException")
    with api_error("NotFoundException", 404):
        s3tables.get_table_bucket(tableBucketARN=bucket_arn(name))


def test_error_wire_format(raw):
    resp = raw("GET", f"/buckets/{quote_arn(bucket_arn(unique('nobkt')))}")
    body = assert_raw_error(resp, 404, "NotFoundException")
    assert resp.headers["x-amzn-ErrorType"].split(":")[0] == "NotFoundException"
    assert set(body) >= {"message"}


def test_rejected_requests_do_not_create_buckets(s3tables):
    # Sanity check of the premise of this module: a good request does create one.
    name = unique("ok")
    try:
        assert status(s3tables.create_table_bucket(name=name)) == 200
        assert name in [b["name"] for b in s3tables.list_table_buckets(prefix=name)["tableBuckets"]]
    finally:
        purge_bucket(s3tables, bucket_arn(name))
