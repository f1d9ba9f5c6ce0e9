"""Bucket metrics configuration: Put/Get/Delete TableBucketMetricsConfiguration
(reference/s3tables-api.md §2 "Metrics"; PUT has no body and no Content-Type, §1.3)."""

from urllib.parse import urlsplit

from tablebay_test.expect import api_error, bucket_arn, status, unique


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
