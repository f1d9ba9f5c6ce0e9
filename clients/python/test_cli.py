"""The real `aws s3tables` CLI (v1) against the server: one full scenario from bucket to cleanup,
plus how CLI errors surface (reference/s3tables-api.md §1.2 commands and flags)."""

import json

from tablebay_test import ACCOUNT_ID
from tablebay_test.cli import AwsCli
from tablebay_test.expect import (
    RFC3339_Z_RE, WAREHOUSE_RE, assert_wire_timestamp, bucket_arn, metadata_location_re, new_metadata_location,
    table_arn_re, unique,
)
from tablebay_test.samples import METADATA_SCHEMA, policy_document


def test_cli_scenario(cli):
    name = unique("cli")
    arn = cli("create-table-bucket", "--name", name)["arn"]
    assert arn == bucket_arn(name)
    got_bucket = cli("get-table-bucket", "--table-bucket-arn", arn)
    assert (got_bucket["name"], got_bucket["ownerAccountId"]) == (name, ACCOUNT_ID)
    assert_wire_timestamp(got_bucket["createdAt"])  # aws-cli v1 prints the wire string unchanged
    assert arn in [b["arn"] for b in cli("list-table-buckets", "--prefix", name)["tableBuckets"]]

    ns = cli("create-namespace", "--table-bucket-arn", arn, "--namespace", "analytics")
    assert ns == {"tableBucketARN": arn, "namespace": ["analytics"]}
    assert cli("get-namespace", "--table-bucket-arn", arn, "--namespace", "analytics")["namespace"] == ["analytics"]
    assert [n["namespace"] for n in cli("list-namespaces", "--table-bucket-arn", arn)["namespaces"]] \
        == [["analytics"]]

    created = cli("create-table", "--table-bucket-arn", arn, "--namespace", "analytics", "--name", "events",
                  "--format", "ICEBERG", "--metadata", json.dumps(METADATA_SCHEMA))
    table_arn = created["tableARN"]
    assert table_arn_re(arn).match(table_arn), table_arn
    table = cli("get-table", "--table-bucket-arn", arn, "--namespace", "analytics", "--name", "events")
    assert table["tableARN"] == table_arn
    assert table["name"] == "events" and table["namespace"] == ["analytics"] and table["format"] == "ICEBERG"
    assert table["versionToken"] == created["versionToken"]
    assert WAREHOUSE_RE.match(table["warehouseLocation"])
    assert metadata_location_re(table["warehouseLocation"], 0).match(table["metadataLocation"])
    assert RFC3339_Z_RE.match(table["createdAt"]) and RFC3339_Z_RE.match(table["modifiedAt"])
    assert cli("get-table", "--table-arn", table_arn)["name"] == "events"

    listed = cli("list-tables", "--table-bucket-arn", arn, "--namespace", "analytics")["tables"]
    assert [(t["name"], t["tableARN"]) for t in listed] == [("events", table_arn)]

    location = cli("get-table-metadata-location", "--table-bucket-arn", arn, "--namespace", "analytics",
                   "--name", "events")
    assert location["metadataLocation"] == table["metadataLocation"]
    assert location["versionToken"] == created["versionToken"]
    target = new_metadata_location(location["warehouseLocation"], 1)
    updated = cli("update-table-metadata-location", "--table-bucket-arn", arn, "--namespace", "analytics",
                  "--name", "events", "--version-token", location["versionToken"], "--metadata-location", target)
    assert updated["metadataLocation"] == target and updated["tableARN"] == table_arn
    assert updated["versionToken"] != location["versionToken"]
    stale = cli.run("update-table-metadata-location", "--table-bucket-arn", arn, "--namespace", "analytics",
                    "--name", "events", "--version-token", location["versionToken"],
                    "--metadata-location", new_metadata_location(location["warehouseLocation"], 2), check=False)
    assert stale.returncode != 0 and "ConflictException" in stale.stderr, stale

    assert cli("rename-table", "--table-bucket-arn", arn, "--namespace", "analytics", "--name", "events",
               "--new-name", "clicks", "--version-token", updated["versionToken"]) is None
    renamed = cli("get-table", "--table-bucket-arn", arn, "--namespace", "analytics", "--name", "clicks")
    assert renamed["tableARN"] == table_arn and renamed["metadataLocation"] == target

    policy = policy_document("s3tables:GetTable")
    assert cli("put-table-bucket-policy", "--table-bucket-arn", arn, "--resource-policy", policy) in (None, {})
    got_policy = cli("get-table-bucket-policy", "--table-bucket-arn", arn)["resourcePolicy"]
    assert json.loads(got_policy) == json.loads(policy)

    value = {"status": "enabled", "settings": {"icebergCompaction": {"targetFileSizeMB": 128, "strategy": "binpack"}}}
    assert cli("put-table-maintenance-configuration", "--table-bucket-arn", arn, "--namespace", "analytics",
               "--name", "clicks", "--type", "icebergCompaction", "--value", json.dumps(value)) is None
    maintenance = cli("get-table-maintenance-configuration", "--table-bucket-arn", arn, "--namespace",
                      "analytics", "--name", "clicks")
    assert maintenance["tableARN"] == table_arn
    assert maintenance["configuration"]["icebergCompaction"] == value
    job = cli("get-table-maintenance-job-status", "--table-bucket-arn", arn, "--namespace", "analytics",
              "--name", "clicks")
    assert job["status"]["icebergCompaction"] == {"status": "Not_Yet_Run"}

    assert cli("delete-table", "--table-bucket-arn", arn, "--namespace", "analytics", "--name", "clicks") is None
    assert cli("list-tables", "--table-bucket-arn", arn)["tables"] == []
    assert cli("delete-namespace", "--table-bucket-arn", arn, "--namespace", "analytics") is None
    assert cli("delete-table-bucket-policy", "--table-bucket-arn", arn) is None
    assert cli("delete-table-bucket", "--table-bucket-arn", arn) is None
    assert cli("list-table-buckets", "--prefix", name)["tableBuckets"] == []
    missing = cli.run("get-table-bucket", "--table-bucket-arn", arn, check=False)
    assert missing.returncode != 0 and "NotFoundException" in missing.stderr, missing


def test_cli_reports_modeled_errors(cli):
    bad = cli.run("create-table-bucket", "--name", "Not_Valid", check=False)
    assert bad.returncode != 0
    assert "BadRequestException" in bad.stderr, bad.stderr
    assert cli("list-table-buckets", "--prefix", "not")["tableBuckets"] == []


def test_cli_with_wrong_secret_is_forbidden(server, cli, tmp_path):
    intruder = AwsCli(server.tables_url, tmp_path / "home", secret_key="definitely-wrong")
    name = unique("clideny")
    denied = intruder.run("create-table-bucket", "--name", name, check=False)
    assert denied.returncode != 0
    assert "ForbiddenException" in denied.stderr or "AccessDeniedException" in denied.stderr, denied.stderr
    assert cli("list-table-buckets", "--prefix", name)["tableBuckets"] == []
