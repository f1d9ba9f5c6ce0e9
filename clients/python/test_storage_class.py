"""Storage class: Put/Get TableBucketStorageClass, GetTableStorageClass, and
`storageClassConfiguration` on CreateTableBucket/CreateTable
(reference/s3tables-api.md §2 "Storage class", §3.1 StorageClass STANDARD | INTELLIGENT_TIERING)."""

from tablebay_test.expect import api_error, bucket_arn, purge_bucket, status, unique

STANDARD = {"storageClass": "STANDARD"}
TIERING = {"storageClass": "INTELLIGENT_TIERING"}


def bucket_class(s3tables, arn):
    return s3tables.get_table_bucket_storage_class(tableBucketARN=arn)["storageClassConfiguration"]


def test_bucket_storage_class(s3tables, bucket):
    resp = s3tables.get_table_bucket_storage_class(tableBucketARN=bucket.arn)
    assert status(resp) == 200
    assert resp["storageClassConfiguration"] == STANDARD
    put = s3tables.put_table_bucket_storage_class(tableBucketARN=bucket.arn, storageClassConfiguration=TIERING)
    assert status(put) == 200
    assert bucket_class(s3tables, bucket.arn) == TIERING


def test_create_bucket_with_storage_class(s3tables):
    arn = s3tables.create_table_bucket(name=unique("sc"), storageClassConfiguration=TIERING)["arn"]
    try:
        assert bucket_class(s3tables, arn) == TIERING
    finally:
        purge_bucket(s3tables, arn)


def test_table_storage_class(s3tables, namespace):
    arn = namespace.bucket.arn
    s3tables.create_table(tableBucketARN=arn, namespace=namespace.name, name="inherits", format="ICEBERG")
    s3tables.create_table(tableBucketARN=arn, namespace=namespace.name, name="own", format="ICEBERG",
                          storageClassConfiguration=TIERING)
    got = s3tables.get_table_storage_class(tableBucketARN=arn, namespace=namespace.name, name="inherits")
    assert status(got) == 200
    assert got["storageClassConfiguration"] == STANDARD
    assert s3tables.get_table_storage_class(tableBucketARN=arn, namespace=namespace.name,
                                            name="own")["storageClassConfiguration"] == TIERING


def test_invalid_storage_class_is_bad_request(s3tables, bucket):
    with api_error("BadRequestException", 400):
        s3tables.put_table_bucket_storage_class(tableBucketARN=bucket.arn,
                                                storageClassConfiguration={"storageClass": "GLACIER"})
    assert bucket_class(s3tables, bucket.arn) == STANDARD


def test_storage_class_of_missing_resources(s3tables, namespace):
    with api_error("NotFoundException", 404):
        s3tables.get_table_bucket_storage_class(tableBucketARN=bucket_arn(unique("nobkt")))
    with api_error("NotFoundException", 404):
        s3tables.get_table_storage_class(tableBucketARN=namespace.bucket.arn, namespace=namespace.name,
                                         name="absent")
