"""Bucket and table resource policies: Put/Get/Delete TableBucketPolicy and TablePolicy
(reference/s3tables-api.md §2 "Policies", §3.2 ResourcePolicy 1–20480)."""

import json

import pytest

from tablebay_test.expect import api_error, bucket_arn, status, unique
from tablebay_test.samples import policy_document


def test_bucket_policy_lifecycle(s3tables, bucket):
    with api_error("NotFoundException", 404):
        s3tables.get_table_bucket_policy(tableBucketARN=bucket.arn)
    doc = policy_document("s3tables:GetTable")
    put = s3tables.put_table_bucket_policy(tableBucketARN=bucket.arn, resourcePolicy=doc)
    assert status(put) == 200
    got = s3tables.get_table_bucket_policy(tableBucketARN=bucket.arn)
    assert status(got) == 200
    assert isinstance(got["resourcePolicy"], str)
    assert json.loads(got["resourcePolicy"]) == json.loads(doc)

    replacement = policy_document("s3tables:ListTables")
    s3tables.put_table_bucket_policy(tableBucketARN=bucket.arn, resourcePolicy=replacement)
    assert json.loads(s3tables.get_table_bucket_policy(tableBucketARN=bucket.arn)["resourcePolicy"]) \
        == json.loads(replacement)

    deleted = s3tables.delete_table_bucket_policy(tableBucketARN=bucket.arn)
    assert status(deleted) == 204
    with api_error("NotFoundException", 404):
        s3tables.get_table_bucket_policy(tableBucketARN=bucket.arn)


def test_table_policy_lifecycle(s3tables, table):
    ids = dict(tableBucketARN=table.bucket_arn, namespace=table.namespace, name=table.name)
    with api_error("NotFoundException", 404):
        s3tables.get_table_policy(**ids)
    doc = policy_document("s3tables:GetTableData")
    assert status(s3tables.put_table_policy(resourcePolicy=doc, **ids)) == 200
    got = s3tables.get_table_policy(**ids)
    assert json.loads(got["resourcePolicy"]) == json.loads(doc)
    # The bucket has no policy of its own: table and bucket policies are separate.
    with api_error("NotFoundException", 404):
        s3tables.get_table_bucket_policy(tableBucketARN=table.bucket_arn)
    assert status(s3tables.delete_table_policy(**ids)) == 204
    with api_error("NotFoundException", 404):
        s3tables.get_table_policy(**ids)


def test_table_policy_follows_rename(s3tables, table):
    ids = dict(tableBucketARN=table.bucket_arn, namespace=table.namespace)
    doc = policy_document("s3tables:GetTable")
    s3tables.put_table_policy(name=table.name, resourcePolicy=doc, **ids)
    s3tables.rename_table(name=table.name, newName="renamed", **ids)
    assert json.loads(s3tables.get_table_policy(name="renamed", **ids)["resourcePolicy"]) == json.loads(doc)


def test_policies_of_missing_resources(s3tables, namespace):
    missing_bucket = bucket_arn(unique("nobkt"))
    doc = policy_document()
    with api_error("NotFoundException", 404):
        s3tables.put_table_bucket_policy(tableBucketARN=missing_bucket, resourcePolicy=doc)
    with api_error("NotFoundException", 404):
        s3tables.get_table_bucket_policy(tableBucketARN=missing_bucket)
    with api_error("NotFoundException", 404):
        s3tables.put_table_policy(tableBucketARN=namespace.bucket.arn, namespace=namespace.name, name="absent",
                                  resourcePolicy=doc)
    with api_error("NotFoundException", 404):
        s3tables.get_table_policy(tableBucketARN=namespace.bucket.arn, namespace=namespace.name, name="absent")


@pytest.mark.parametrize("policy", [
    "this is not json",
    '{"Version": "2012-10-17", "Statement": ',
    '{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":"*","Action":"s3tables:GetTable",'
    '"Resource":"*","Padding":"' + "x" * 20480 + '"}]}',
], ids=["not-json", "truncated-json", "over-20480-chars"])
def test_invalid_policy_is_bad_request(s3tables, table, policy):
    with api_error("BadRequestException", 400):
        s3tables.put_table_bucket_policy(tableBucketARN=table.bucket_arn, resourcePolicy=policy)
    with api_error("BadRequestException", 400):
        s3tables.put_table_policy(tableBucketARN=table.bucket_arn, namespace=table.namespace, name=table.name,
                                  resourcePolicy=policy)
    with api_error("NotFoundException", 404):
        s3tables.get_table_bucket_policy(tableBucketARN=table.bucket_arn)
    with api_error("NotFoundException", 404):
        s3tables.get_table_policy(tableBucketARN=table.bucket_arn, namespace=table.namespace, name=table.name)
