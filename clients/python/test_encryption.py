"""Encryption settings: Put/Get/Delete TableBucketEncryption, GetTableEncryption, and
CreateTableBucket/CreateTable with `encryptionConfiguration`
(reference/s3tables-api.md §2 "Encryption", §4 "Encryption defaults", §3.1 SSEAlgorithm)."""

import pytest

from tablebay_test import ACCOUNT_ID
from tablebay_test.expect import api_error, bucket_arn, purge_bucket, status, unique

AES256 = {"sseAlgorithm": "AES256"}
KMS = {"sseAlgorithm": "aws:kms", "kmsKeyArn": f"arn:aws:kms:us-east-1:{ACCOUNT_ID}:key/1234abcd-12ab-34cd"}


def bucket_encryption(s3tables, arn):
    return s3tables.get_table_bucket_encryption(tableBucketARN=arn)["encryptionConfiguration"]


def test_new_bucket_defaults_to_sse_s3(s3tables, bucket):
    # Every AWS table bucket is SSE-S3 (AES256) encrypted by default.
    resp = s3tables.get_table_bucket_encryption(tableBucketARN=bucket.arn)
    assert status(resp) == 200
    assert resp["encryptionConfiguration"] == AES256


def test_put_get_delete_bucket_encryption(s3tables, bucket):
    put = s3tables.put_table_bucket_encryption(tableBucketARN=bucket.arn, encryptionConfiguration=KMS)
    assert status(put) == 200
    assert bucket_encryption(s3tables, bucket.arn) == KMS
    s3tables.put_table_bucket_encryption(tableBucketARN=bucket.arn, encryptionConfiguration=AES256)
    assert bucket_encryption(s3tables, bucket.arn) == AES256

    s3tables.put_table_bucket_encryption(tableBucketARN=bucket.arn, encryptionConfiguration=KMS)
    deleted = s3tables.delete_table_bucket_encryption(tableBucketARN=bucket.arn)
    assert status(deleted) == 204
    # After a delete the bucket is back to the default (AWS: SSE-S3) or has none (OSS: unencrypted, 404).
    try:
        after = bucket_encryption(s3tables, bucket.arn)
    except s3tables.exceptions.NotFoundException:
        after = None
    assert after in (AES256, None)
    assert after != KMS


def test_create_bucket_with_encryption(s3tables):
    name = unique("enc")
    arn = s3tables.create_table_bucket(name=name, encryptionConfiguration=KMS)["arn"]
    try:
        assert bucket_encryption(s3tables, arn) == KMS
    finally:
        purge_bucket(s3tables, arn)


def test_table_inherits_bucket_encryption_at_creation(s3tables, namespace):
    arn = namespace.bucket.arn
    s3tables.put_table_bucket_encryption(tableBucketARN=arn, encryptionConfiguration=KMS)
    s3tables.create_table(tableBucketARN=arn, namespace=namespace.name, name="inherits", format="ICEBERG")
    got = s3tables.get_table_encryption(tableBucketARN=arn, namespace=namespace.name, name="inherits")
    assert status(got) == 200
    assert got["encryptionConfiguration"] == KMS
    # Changing the bucket default later affects only tables created afterwards.
    s3tables.put_table_bucket_encryption(tableBucketARN=arn, encryptionConfiguration=AES256)
    assert s3tables.get_table_encryption(tableBucketARN=arn, namespace=namespace.name,
                                         name="inherits")["encryptionConfiguration"] == KMS
    s3tables.create_table(tableBucketARN=arn, namespace=namespace.name, name="later", format="ICEBERG")
    assert s3tables.get_table_encryption(tableBucketARN=arn, namespace=namespace.name,
                                         name="later")["encryptionConfiguration"] == AES256


def test_table_with_explicit_encryption(s3tables, namespace):
    arn = namespace.bucket.arn
    s3tables.create_table(tableBucketARN=arn, namespace=namespace.name, name="own", format="ICEBERG",
                          encryptionConfiguration=KMS)
    assert bucket_encryption(s3tables, arn) == AES256
    assert s3tables.get_table_encryption(tableBucketARN=arn, namespace=namespace.name,
                                         name="own")["encryptionConfiguration"] == KMS


@pytest.mark.parametrize("config", [
    {"sseAlgorithm": "DES"},
    {"sseAlgorithm": "aes256"},
    {"sseAlgorithm": "aws:kms", "kmsKeyArn": "not-a-key-arn"},
], ids=["unknown-algorithm", "wrong-case", "bad-kms-key-arn"])
def test_invalid_encryption_is_bad_request(s3tables, bucket, config):
    with api_error("BadRequestException", 400):
        s3tables.put_table_bucket_encryption(tableBucketARN=bucket.arn, encryptionConfiguration=config)
    assert bucket_encryption(s3tables, bucket.arn) == AES256
    name = unique("enc")
    with api_error("BadRequestException", 400):
        s3tables.create_table_bucket(name=name, encryptionConfiguration=config)
    with api_error("NotFoundException", 404):
        s3tables.get_table_bucket(tableBucketARN=bucket_arn(name))


def test_encryption_of_missing_resources(s3tables, namespace):
    missing = bucket_arn(unique("nobkt"))
    with api_error("NotFoundException", 404):
        s3tables.get_table_bucket_encryption(tableBucketARN=missing)
    with api_error("NotFoundException", 404):
        s3tables.put_table_bucket_encryption(tableBucketARN=missing, encryptionConfiguration=AES256)
    with api_error("NotFoundException", 404):
        s3tables.delete_table_bucket_encryption(tableBucketARN=missing)
    with api_error("NotFoundException", 404):
        s3tables.get_table_encryption(tableBucketARN=namespace.bucket.arn, namespace=namespace.name,
                                      name="absent")
