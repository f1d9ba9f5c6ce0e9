"""Maintenance configuration and job status: Put/Get TableBucketMaintenanceConfiguration,
Put/Get TableMaintenanceConfiguration, GetTableMaintenanceJobStatus
(reference/s3tables-api.md §2 "Maintenance", §4 defaults and semantics, §5 wire examples)."""

import copy

import pytest

from tablebay_test.expect import api_error, assert_raw_error, bucket_arn, status, unique
from tablebay_test.samples import BUCKET_MAINTENANCE_DEFAULTS, TABLE_MAINTENANCE_DEFAULTS
from tablebay_test.signing import quote_arn


def table_config(s3tables, t):
    return s3tables.get_table_maintenance_configuration(tableBucketARN=t.bucket_arn, namespace=t.namespace,
                                                        name=t.name)["configuration"]


def put_table(s3tables, t, type_, value):
    return s3tables.put_table_maintenance_configuration(tableBucketARN=t.bucket_arn, namespace=t.namespace,
                                                        name=t.name, type=type_, value=value)


def job_status(s3tables, t):
    return s3tables.get_table_maintenance_job_status(tableBucketARN=t.bucket_arn, namespace=t.namespace,
                                                     name=t.name)


def test_table_defaults(s3tables, table):
    resp = s3tables.get_table_maintenance_configuration(tableBucketARN=table.bucket_arn,
                                                        namespace=table.namespace, name=table.name)
    assert status(resp) == 200
    assert resp["tableARN"] == table.arn
    assert resp["configuration"] == TABLE_MAINTENANCE_DEFAULTS


def test_bucket_defaults(s3tables, bucket):
    resp = s3tables.get_table_bucket_maintenance_configuration(tableBucketARN=bucket.arn)
    assert status(resp) == 200
    assert resp["tableBucketARN"] == bucket.arn
    assert resp["configuration"] == BUCKET_MAINTENANCE_DEFAULTS


def test_put_table_compaction(s3tables, table):
    value = {"status": "enabled", "settings": {"icebergCompaction": {"targetFileSizeMB": 256, "strategy": "sort"}}}
    assert status(put_table(s3tables, table, "icebergCompaction", value)) == 204
    expected = copy.deepcopy(TABLE_MAINTENANCE_DEFAULTS)
    expected["icebergCompaction"] = value
    assert table_config(s3tables, table) == expected


def test_put_table_snapshot_management(s3tables, table):
    value = {"status": "enabled",
             "settings": {"icebergSnapshotManagement": {"minSnapshotsToKeep": 5, "maxSnapshotAgeHours": 48}}}
    assert status(put_table(s3tables, table, "icebergSnapshotManagement", value)) == 204
    expected = copy.deepcopy(TABLE_MAINTENANCE_DEFAULTS)
    expected["icebergSnapshotManagement"] = value
    assert table_config(s3tables, table) == expected


def test_put_fills_in_defaults_for_omitted_leaves(s3tables, table):
    put_table(s3tables, table, "icebergCompaction", {"status": "disabled"})
    put_table(s3tables, table, "icebergSnapshotManagement",
              {"status": "enabled", "settings": {"icebergSnapshotManagement": {"minSnapshotsToKeep": 3}}})
    config = table_config(s3tables, table)
    assert config["icebergCompaction"] == {
        "status": "disabled", "settings": {"icebergCompaction": {"targetFileSizeMB": 512, "strategy": "auto"}}}
    assert config["icebergSnapshotManagement"] == {
        "status": "enabled",
        "settings": {"icebergSnapshotManagement": {"minSnapshotsToKeep": 3, "maxSnapshotAgeHours": 120}}}


def test_put_replaces_the_whole_value(s3tables, table):
    put_table(s3tables, table, "icebergCompaction",
              {"status": "enabled", "settings": {"icebergCompaction": {"targetFileSizeMB": 128, "strategy": "binpack"}}})
    put_table(s3tables, table, "icebergCompaction",
              {"status": "enabled", "settings": {"icebergCompaction": {"strategy": "z-order"}}})
    assert table_config(s3tables, table)["icebergCompaction"] == {
        "status": "enabled", "settings": {"icebergCompaction": {"targetFileSizeMB": 512, "strategy": "z-order"}}}


def test_put_bucket_unreferenced_file_removal(s3tables, bucket):
    value = {"status": "enabled",
             "settings": {"icebergUnreferencedFileRemoval": {"unreferencedDays": 5, "nonCurrentDays": 20}}}
    resp = s3tables.put_table_bucket_maintenance_configuration(
        tableBucketARN=bucket.arn, type="icebergUnreferencedFileRemoval", value=value)
    assert status(resp) == 204
    got = s3tables.get_table_bucket_maintenance_configuration(tableBucketARN=bucket.arn)
    assert got["configuration"] == {"icebergUnreferencedFileRemoval": value}

    s3tables.put_table_bucket_maintenance_configuration(
        tableBucketARN=bucket.arn, type="icebergUnreferencedFileRemoval", value={"status": "disabled"})
    got = s3tables.get_table_bucket_maintenance_configuration(tableBucketARN=bucket.arn)
    assert got["configuration"] == {"icebergUnreferencedFileRemoval": {
        "status": "disabled",
        "settings": {"icebergUnreferencedFileRemoval": {"unreferencedDays": 3, "nonCurrentDays": 10}}}}


def test_job_status_of_new_table(s3tables, table):
    resp = job_status(s3tables, table)
    assert status(resp) == 200
    assert resp["tableARN"] == table.arn
    assert resp["status"] == {
        "icebergCompaction": {"status": "Not_Yet_Run"},
        "icebergSnapshotManagement": {"status": "Not_Yet_Run"},
        "icebergUnreferencedFileRemoval": {"status": "Not_Yet_Run"},
    }


def test_job_status_follows_configuration(s3tables, table):
    put_table(s3tables, table, "icebergCompaction", {"status": "disabled"})
    assert job_status(s3tables, table)["status"] == {
        "icebergCompaction": {"status": "Disabled"},
        "icebergSnapshotManagement": {"status": "Not_Yet_Run"},
        "icebergUnreferencedFileRemoval": {"status": "Not_Yet_Run"},
    }
    # Unreferenced-file removal is configured on the bucket and reported per table.
    s3tables.put_table_bucket_maintenance_configuration(
        tableBucketARN=table.bucket_arn, type="icebergUnreferencedFileRemoval", value={"status": "disabled"})
    put_table(s3tables, table, "icebergSnapshotManagement", {"status": "disabled"})
    put_table(s3tables, table, "icebergCompaction", {"status": "enabled"})
    assert job_status(s3tables, table)["status"] == {
        "icebergCompaction": {"status": "Not_Yet_Run"},
        "icebergSnapshotManagement": {"status": "Disabled"},
        "icebergUnreferencedFileRemoval": {"status": "Disabled"},
    }


@pytest.mark.parametrize("size", [64, 512])
def test_target_file_size_bounds_accepted(s3tables, table, size):
    value = {"status": "enabled", "settings": {"icebergCompaction": {"targetFileSizeMB": size}}}
    put_table(s3tables, table, "icebergCompaction", value)
    assert table_config(s3tables, table)["icebergCompaction"]["settings"]["icebergCompaction"]["targetFileSizeMB"] \
        == size


@pytest.mark.parametrize("type_,value", [
    ("icebergCompaction", {"status": "enabled", "settings": {"icebergCompaction": {"targetFileSizeMB": 63}}}),
    ("icebergCompaction", {"status": "enabled", "settings": {"icebergCompaction": {"targetFileSizeMB": 513}}}),
    ("icebergCompaction", {"status": "enabled", "settings": {"icebergCompaction": {"strategy": "fastest"}}}),
    ("icebergCompaction", {"status": "paused"}),
    ("icebergCompaction", {"status": "enabled",
                           "settings": {"icebergSnapshotManagement": {"minSnapshotsToKeep": 2}}}),
    ("icebergSnapshotManagement", {"status": "enabled",
                                   "settings": {"icebergCompaction": {"targetFileSizeMB": 128}}}),
    ("icebergUnreferencedFileRemoval", {"status": "enabled"}),
    ("icebergVacuum", {"status": "enabled"}),
], ids=["size-63", "size-513", "unknown-strategy", "unknown-status", "compaction-with-snapshot-settings",
        "snapshot-with-compaction-settings", "bucket-type-on-table", "unknown-type"])
def test_invalid_table_maintenance_is_bad_request(s3tables, table, type_, value):
    with api_error("BadRequestException", 400):
        put_table(s3tables, table, type_, value)
    assert table_config(s3tables, table) == TABLE_MAINTENANCE_DEFAULTS


@pytest.mark.parametrize("type_,value", [
    ("icebergUnreferencedFileRemoval", {"status": "sometimes"}),
    ("icebergUnreferencedFileRemoval", {"status": "enabled",
                                        "settings": {"icebergUnreferencedFileRemoval": {"unreferencedDays": 0}}}),
    ("icebergCompaction", {"status": "enabled"}),
    ("icebergSnapshotManagement", {"status": "enabled"}),
], ids=["unknown-status", "zero-days", "table-type-on-bucket", "snapshot-type-on-bucket"])
def test_invalid_bucket_maintenance_is_bad_request(s3tables, raw, bucket, type_, value):
    # Sent raw: botocore would refuse days < 1 client-side.
    path = f"/buckets/{quote_arn(bucket.arn)}/maintenance/{type_}"
    assert_raw_error(raw("PUT", path, {"value": value}), 400, "BadRequestException")
    assert s3tables.get_table_bucket_maintenance_configuration(tableBucketARN=bucket.arn)["configuration"] \
        == BUCKET_MAINTENANCE_DEFAULTS


def test_bucket_settings_key_must_match_type(s3tables, raw, bucket):
    # botocore only knows `icebergUnreferencedFileRemoval` under bucket settings; other clients send anything.
    path = f"/buckets/{quote_arn(bucket.arn)}/maintenance/icebergUnreferencedFileRemoval"
    body = {"value": {"status": "enabled", "settings": {"icebergCompaction": {"targetFileSizeMB": 128}}}}
    assert_raw_error(raw("PUT", path, body), 400, "BadRequestException")
    assert s3tables.get_table_bucket_maintenance_configuration(tableBucketARN=bucket.arn)["configuration"] \
        == BUCKET_MAINTENANCE_DEFAULTS


@pytest.mark.parametrize("body", [
    {"value": {"status": "enabled", "settings": {"icebergCompaction": {"targetFileSizeMB": 0}}}},
    {"value": {"status": "enabled", "settings": {"icebergCompaction": {"targetFileSizeMB": 128},
                                                 "icebergSnapshotManagement": {"minSnapshotsToKeep": 2}}}},
    {"value": {"status": "enabled", "settings": {"icebergCompaction": {"targetFileSizeMB": "big"}}}},
    {},
], ids=["zero-size", "two-union-keys", "size-not-a-number", "no-value"])
def test_invalid_maintenance_bodies_botocore_would_not_send(raw, s3tables, table, body):
    # botocore checks `min`, union exclusivity, types and required members client-side; other clients don't.
    path = f"/tables/{quote_arn(table.bucket_arn)}/{table.namespace}/{table.name}/maintenance/icebergCompaction"
    assert_raw_error(raw("PUT", path, body), 400, "BadRequestException")
    assert table_config(s3tables, table) == TABLE_MAINTENANCE_DEFAULTS


def test_maintenance_of_missing_resources(s3tables, namespace):
    missing = bucket_arn(unique("nobkt"))
    with api_error("NotFoundException", 404):
        s3tables.get_table_bucket_maintenance_configuration(tableBucketARN=missing)
    with api_error("NotFoundException", 404):
        s3tables.put_table_bucket_maintenance_configuration(
            tableBucketARN=missing, type="icebergUnreferencedFileRemoval", value={"status": "enabled"})
    ids = dict(tableBucketARN=namespace.bucket.arn, namespace=namespace.name, name="absent")
    with api_error("NotFoundException", 404):
        s3tables.get_table_maintenance_configuration(**ids)
    with api_error("NotFoundException", 404):
        s3tables.put_table_maintenance_configuration(type="icebergCompaction", value={"status": "enabled"}, **ids)
    with api_error("NotFoundException", 404):
        s3tables.get_table_maintenance_job_status(**ids)
