"""The default ARN flavor (`--arn-flavor oss`): ARNs are `acs:osstables:<region>:<account>:bucket/<name>`
and both forms are accepted on input (DESIGN.md "Fixed interfaces"; reference/s3tables-api.md §6).
boto3 sends `acs:` ARNs unchanged: it does not check the model's ARN patterns (§1.7)."""

import pytest

from tablebay_test import ACCOUNT_ID
from tablebay_test.clients import make_client
from tablebay_test.expect import WAREHOUSE_RE, bucket_arn, purge_bucket, table_arn_re, unique
from tablebay_test.server import TablebayServer


@pytest.fixture(scope="module")
def oss(oss_server):
    return make_client(oss_server.tables_url)


def test_oss_bucket_arn(oss):
    name = unique("oss")
    arn = oss.create_table_bucket(name=name)["arn"]
    try:
        assert arn == f"acs:osstables:us-east-1:{ACCOUNT_ID}:bucket/{name}"
        got = oss.get_table_bucket(tableBucketARN=arn)
        assert (got["arn"], got["name"], got["ownerAccountId"]) == (arn, name, ACCOUNT_ID)
        assert [b["arn"] for b in oss.list_table_buckets(prefix=name)["tableBuckets"]] == [arn]
        # The aws form of the same ARN names the same bucket; answers use the server's flavor.
        assert oss.get_table_bucket(tableBucketARN=bucket_arn(name, "aws"))["arn"] == arn
    finally:
        purge_bucket(oss, arn)


def test_oss_namespace_and_table(oss):
    name = unique("oss")
    arn = oss.create_table_bucket(name=name)["arn"]
    try:
        ns = oss.create_namespace(tableBucketARN=arn, namespace=["ns1"])
        assert (ns["tableBucketARN"], ns["namespace"]) == (arn, ["ns1"])
        assert oss.get_namespace(tableBucketARN=arn, namespace="ns1")["namespace"] == ["ns1"]
        created = oss.create_table(tableBucketARN=arn, namespace="ns1", name="t1", format="ICEBERG")
        assert table_arn_re(arn).match(created["tableARN"]), created["tableARN"]
        by_arn = oss.get_table(tableArn=created["tableARN"])
        assert by_arn["name"] == "t1" and by_arn["tableARN"] == created["tableARN"]
        assert WAREHOUSE_RE.match(by_arn["warehouseLocation"])
        listed = oss.list_tables(tableBucketARN=arn, namespace="ns1")["tables"]
        assert [t["tableARN"] for t in listed] == [created["tableARN"]]
        config = oss.get_table_maintenance_configuration(tableBucketARN=arn, namespace="ns1", name="t1")
        assert config["tableARN"] == created["tableARN"]
        # The table ARN in the aws form reaches the same table.
        aws_form = created["tableARN"].replace("acs:osstables:", "arn:aws:s3tables:", 1)
        assert oss.get_table(tableArn=aws_form)["tableARN"] == created["tableARN"]
    finally:
        purge_bucket(oss, arn)


def test_aws_server_accepts_oss_arns(s3tables, bucket):
    oss_form = bucket_arn(bucket.name, "oss")
    got = s3tables.get_table_bucket(tableBucketARN=oss_form)
    assert got["arn"] == bucket.arn
    s3tables.create_namespace(tableBucketARN=oss_form, namespace=["via_oss_arn"])
    assert [n["namespace"] for n in s3tables.list_namespaces(tableBucketARN=bucket.arn)["namespaces"]] \
        == [["via_oss_arn"]]


OSS_UID = "1142323451804027"  # Alibaba account UIDs have 16 digits (reference §6)


@pytest.fixture(scope="module")
def oss_uid_server(tmp_path_factory):
    srv = TablebayServer(tmp_path_factory.mktemp("tablebay-oss-uid"), arn_flavor=None, account_id=OSS_UID).start()
    yield srv
    srv.stop()


def test_oss_flavor_with_16_digit_account(oss_uid_server):
    oss = make_client(oss_uid_server.tables_url)
    name = unique("uid")
    arn = oss.create_table_bucket(name=name)["arn"]
    try:
        assert arn == f"acs:osstables:us-east-1:{OSS_UID}:bucket/{name}"
        assert oss.get_table_bucket(tableBucketARN=arn)["ownerAccountId"] == OSS_UID
        oss.create_namespace(tableBucketARN=arn, namespace=["ns1"])
        created = oss.create_table(tableBucketARN=arn, namespace="ns1", name="t1", format="ICEBERG")
        assert table_arn_re(arn).match(created["tableARN"]), created["tableARN"]
        got = oss.get_table(tableArn=created["tableARN"])
        assert (got["name"], got["ownerAccountId"]) == ("t1", OSS_UID)
        assert oss.list_tags_for_resource(resourceArn=created["tableARN"]).get("tags", {}) == {}
    finally:
        purge_bucket(oss, arn)
