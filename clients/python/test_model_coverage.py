"""Every operation of the pinned botocore's `s3tables` model (issue 21): each served operation is called once
with valid input and once with one invalid parameter (a value botocore's own validation lets through, so the
server must refuse it with the model's error); each operation not served yet answers a clear refusal. The test
fails when botocore gains an operation that is in neither list, and when docs/s3tables-operations.md, the
table of every operation with its status here, disagrees with these lists.

The operations' behaviour in depth is in the other test files (test_buckets.py, test_tables.py, …); this one is
the census."""

from __future__ import annotations

import json
import os
import re
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import botocore.session
import pytest
from botocore.exceptions import ClientError

from tablebay_test import ACCESS_KEY_ID, ACCOUNT_ID, REGION, SECRET_ACCESS_KEY
from tablebay_test.clients import make_client
from tablebay_test.server import binary_path
from tablebay_test.expect import bucket_arn, new_metadata_location, purge_bucket, unique
from tablebay_test.signing import signed_request

DOC = Path(__file__).resolve().parents[2] / "docs" / "s3tables-operations.md"
POLICY = ('{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":{"AWS":"111122223333"},'
          '"Action":"s3tables:GetTable","Resource":"*"}]}')
MAINTENANCE = {"status": "enabled", "settings": {"icebergUnreferencedFileRemoval": {
    "unreferencedDays": 3, "nonCurrentDays": 10}}}

# Operations not served yet, and why: each answers a refusal that says so (see test_unserved_operations_refuse).
UNSERVED = {
}


class Ctx:
    """The resources the calls act on: a bucket with a namespace and a table, made by the first calls."""

    def __init__(self):
        self.bucket = unique("census")
        self.arn = bucket_arn(self.bucket)
        self.ns = unique("ns", "_")
        self.table = unique("tbl", "_")
        self.table_arn = self.token = self.warehouse = ""
        self.migration = self.migrated_arn = ""
        self.s3tables = None
        self.tables_url = ""

        self.replication_token = self.table_replication_token = self.replica_arn = ""
        self.client = None
        self.cleanup: list[str] = []

    def ids(self, **more) -> dict:
        return {"tableBucketARN": self.arn, "namespace": self.ns, "name": self.table, **more}


@dataclass
class Op:
    name: str
    valid: Callable[[Ctx], dict]
    invalid: Callable[[Ctx], dict]
    error: tuple[str, int] = ("BadRequestException", 400)
    after: Callable[[Ctx, dict], None] = lambda ctx, resp: None
    before: Callable[[Ctx], None] = lambda ctx: None
    # The valid call as a raw signed POST to this path instead of boto3 (members botocore's model lacks).
    raw_path: str | None = None


def _replication(c: Ctx, destination: str, role: str = "arn:aws:iam::111122223333:role/census") -> dict:
    return {"role": role, "rules": [{"destinations": [{"destinationTableBucketARN": destination}]}]}


def _make_replica(ctx: Ctx) -> None:
    """A replica in the census bucket to disassociate: a table of another bucket on this server, replicated
    into the census namespace by the server's worker with a role that trusts the account."""
    client = ctx.client
    endpoint = client.meta.endpoint_url
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AWS_", "TABLEBAY_"))}
    env.update(AWS_ACCESS_KEY_ID=ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY=SECRET_ACCESS_KEY,
               TABLEBAY_ENDPOINT=endpoint, TABLEBAY_REGION=REGION)

    def admin(*args: str) -> dict:
        proc = subprocess.run([str(binary_path()), "admin", *args], env=env, capture_output=True, text=True,
                              timeout=60)
        assert proc.returncode == 0, proc.stderr
        return json.loads(proc.stdout)

    role = admin("create-role", unique("census"), "--trust-policy", json.dumps({
        "Version": "2012-10-17",
        "Statement": [{"Effect": "Allow", "Principal": {"AWS": [ACCOUNT_ID]}, "Action": "sts:AssumeRole"}]}))
    admin("put-role-policy", role["roleName"], "all", "--document", json.dumps({
        "Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "s3tables:*", "Resource": "*"}]}))
    source = client.create_table_bucket(name=unique("census-src"))["arn"]
    ctx.cleanup.append(source)
    client.create_namespace(tableBucketARN=source, namespace=[ctx.ns])
    table = client.create_table(tableBucketARN=source, namespace=ctx.ns, name="replicated", format="ICEBERG",
                                metadata={"iceberg": {"schema": {"fields": [{"name": "id", "type": "long"}]}}})
    client.put_table_replication(tableArn=table["tableARN"], configuration=_replication(ctx, ctx.arn, role["roleArn"]))
    deadline = time.monotonic() + 30
    while True:
        dest = client.get_table_replication_status(tableArn=table["tableARN"])["destinations"][0]
        if dest["replicationStatus"] == "completed":
            ctx.replica_arn = dest["destinationTableArn"]
            # The source stops replicating: the replica stays, as S3 Tables leaves it.
            token = client.get_table_replication(tableArn=table["tableARN"])["versionToken"]
            client.delete_table_replication(tableArn=table["tableARN"], versionToken=token)
            return
        assert time.monotonic() < deadline, dest
        time.sleep(0.2)


def _drop_replica(ctx: Ctx, resp: dict) -> None:
    got = ctx.client.get_table(tableArn=ctx.replica_arn)
    ctx.client.delete_table(tableBucketARN=ctx.arn, namespace=ctx.ns, name=got["name"])


BAD_ARN = "arn:aws:s3tables:us-east-1:111122223333:bucket"   # no bucket name
BAD_NS = "Not-A-Namespace"                                     # upper case and hyphens are not allowed


def _created_table(ctx: Ctx, resp: dict) -> None:
    ctx.table_arn, ctx.token = resp["tableARN"], resp["versionToken"]


def _located(ctx: Ctx, resp: dict) -> None:
    ctx.token, ctx.warehouse = resp["versionToken"], resp["warehouseLocation"]


def _renamed(ctx: Ctx, resp: dict) -> None:
    ctx.table = ctx.table + "_renamed"


ROLE = "arn:aws:iam::111122223333:role/census"
REPORTS = {"bucket": "arn:aws:s3:::census-reports"}


def _migration_request(c: Ctx) -> dict:
    """The census table (created with a schema) migrated from this server's own Iceberg REST catalog."""
    return {"roleARN": ROLE, "sourceType": "icebergRestTable", "reviewMigrationPlan": True,
            "source": {"icebergRestTable": {
                "uri": c.tables_url + "/iceberg", "warehouse": c.arn, "namespace": [c.ns], "name": c.table,
                "auth": {"type": "sigv4", "accessKeyId": ACCESS_KEY_ID, "secretAccessKey": SECRET_ACCESS_KEY,
                         "signingName": "s3tables", "region": REGION}}},
            "destinationTable": {"tableBucketARN": c.arn, "namespace": c.ns, "name": c.table + "_migrated"},
            "migrationOutput": REPORTS}


def _settled(c: Ctx, state: str) -> None:
    deadline = time.monotonic() + 60
    while (got := c.s3tables.get_table_migration(migrationId=c.migration))["state"] != state:
        assert time.monotonic() < deadline and got["state"] not in ("failed", "cancelled"), got
        time.sleep(0.1)
    c.migrated_arn = got.get("tableARN", "")


def _started(c: Ctx, resp: dict) -> None:
    c.migration = resp["migrationId"]
    _settled(c, "pendingReview")


def _completed(c: Ctx, resp: dict) -> None:
    # The namespace must be empty for DeleteNamespace at the end.
    c.s3tables.delete_table(tableBucketARN=c.arn, namespace=c.ns, name=c.table + "_migrated")


GLUE = {"glueTable": {"catalogId": "111122223333", "databaseName": "db", "tableName": "t"}}
SCHEMA = {"iceberg": {"schema": {"fields": [{"name": "id", "type": "long", "required": False}]}}}


# In the order they run: creations first, deletions last.
SERVED = [
    Op("CreateTableBucket", lambda c: {"name": c.bucket}, lambda c: {"name": "Not_A_Bucket"}),
    Op("ListTableBuckets", lambda c: {"prefix": "census"}, lambda c: {"continuationToken": "not-a-token"}),
    Op("GetTableBucket", lambda c: {"tableBucketARN": c.arn}, lambda c: {"tableBucketARN": BAD_ARN}),
    Op("CreateNamespace", lambda c: {"tableBucketARN": c.arn, "namespace": [c.ns]},
       lambda c: {"tableBucketARN": c.arn, "namespace": [BAD_NS]}),
    Op("ListNamespaces", lambda c: {"tableBucketARN": c.arn},
       lambda c: {"tableBucketARN": c.arn, "continuationToken": "not-a-token"}),
    Op("GetNamespace", lambda c: {"tableBucketARN": c.arn, "namespace": c.ns},
       lambda c: {"tableBucketARN": c.arn, "namespace": BAD_NS}),
    Op("CreateTable", lambda c: c.ids(format="ICEBERG", metadata=SCHEMA),
       lambda c: c.ids(name="other", format="PARQUET"), after=_created_table),
    Op("StartTableMigration", _migration_request,
       lambda c: {"roleARN": ROLE, "sourceType": "glueTable", "source": GLUE, "migrationOutput": REPORTS,
                  "destinationTable": {"tableBucketARN": c.arn, "namespace": c.ns, "name": "from_glue"}},
       raw_path="/start-table-migration", after=_started),
    Op("UpdateTableMigration", lambda c: {"migrationId": c.migration, "requestedState": "queued"},
       lambda c: {"migrationId": c.migration, "requestedState": "paused"},
       after=lambda c, r: _settled(c, "succeeded")),
    Op("GetTableMigration", lambda c: {"migrationId": c.migration}, lambda c: {"migrationId": "not-a-migration"},
       ("NotFoundException", 404)),
    Op("ListTableMigrations", lambda c: {"tableBucketARN": c.arn}, lambda c: {"tableBucketARN": BAD_ARN}),
    Op("SyncTableMigration", lambda c: {"tableARN": c.migrated_arn, "roleARN": ROLE, "migrationOutput": REPORTS},
       lambda c: {"tableARN": c.migrated_arn, "roleARN": "arn:aws:iam::111122223333:user/census",
                  "migrationOutput": REPORTS},
       after=lambda c, r: (setattr(c, "migration", r["migrationId"]), _settled(c, "succeeded"))),
    Op("CompleteTableMigration", lambda c: {"tableARN": c.migrated_arn},
       lambda c: {"tableARN": c.arn + "/table/not-a-table-id"}, after=_completed),
    Op("ListTables", lambda c: {"tableBucketARN": c.arn, "namespace": c.ns},
       lambda c: {"tableBucketARN": c.arn, "namespace": BAD_NS}),
    Op("GetTable", lambda c: {"tableArn": c.table_arn}, lambda c: {"tableArn": "arn:aws:s3tables:nowhere"}),
    Op("GetTableMetadataLocation", lambda c: c.ids(), lambda c: c.ids(namespace=BAD_NS), after=_located),
    Op("UpdateTableMetadataLocation",
       lambda c: c.ids(versionToken=c.token, metadataLocation=new_metadata_location(c.warehouse, 1)),
       lambda c: c.ids(versionToken="made-up-token", metadataLocation=new_metadata_location(c.warehouse, 2)),
       ("ConflictException", 409), after=lambda c, r: setattr(c, "token", r["versionToken"])),
    Op("PutTableBucketEncryption", lambda c: {"tableBucketARN": c.arn,
                                              "encryptionConfiguration": {"sseAlgorithm": "AES256"}},
       lambda c: {"tableBucketARN": c.arn, "encryptionConfiguration": {"sseAlgorithm": "rot13"}}),
    Op("GetTableBucketEncryption", lambda c: {"tableBucketARN": c.arn}, lambda c: {"tableBucketARN": BAD_ARN}),
    Op("GetTableEncryption", lambda c: c.ids(), lambda c: c.ids(namespace=BAD_NS)),
    Op("PutTableBucketMaintenanceConfiguration",
       lambda c: {"tableBucketARN": c.arn, "type": "icebergUnreferencedFileRemoval", "value": MAINTENANCE},
       lambda c: {"tableBucketARN": c.arn, "type": "icebergNothing", "value": MAINTENANCE}),
    Op("GetTableBucketMaintenanceConfiguration", lambda c: {"tableBucketARN": c.arn},
       lambda c: {"tableBucketARN": BAD_ARN}),
    Op("PutTableMaintenanceConfiguration",
       lambda c: c.ids(type="icebergCompaction", value={"status": "enabled"}),
       lambda c: c.ids(type="icebergCompaction", value={"status": "sometimes"})),
    Op("GetTableMaintenanceConfiguration", lambda c: c.ids(), lambda c: c.ids(namespace=BAD_NS)),
    Op("GetTableMaintenanceJobStatus", lambda c: c.ids(), lambda c: c.ids(namespace=BAD_NS)),
    Op("PutTableBucketMetricsConfiguration", lambda c: {"tableBucketARN": c.arn},
       lambda c: {"tableBucketARN": BAD_ARN}),
    Op("GetTableBucketMetricsConfiguration", lambda c: {"tableBucketARN": c.arn},
       lambda c: {"tableBucketARN": BAD_ARN}),
    # An empty status is valid input (it turns logging off), and leaves the census bucket without a log table.
    Op("PutTableBucketLogging", lambda c: {"tableBucketARN": c.arn, "tableBucketLoggingStatus": {}},
       lambda c: {"tableBucketARN": c.arn, "tableBucketLoggingStatus": {"loggingEnabled": {
           "targetBucket": c.bucket, "targetPrefix": "",
           "targetObjectKeyFormat": {"partitionedPrefix": {"partitionDateSource": "Whenever"}}}}}),
    Op("GetTableBucketLogging", lambda c: {"tableBucketARN": c.arn}, lambda c: {"tableBucketARN": BAD_ARN}),
    Op("PutTableBucketPolicy", lambda c: {"tableBucketARN": c.arn, "resourcePolicy": POLICY},
       lambda c: {"tableBucketARN": c.arn, "resourcePolicy": "{not json"}),
    Op("GetTableBucketPolicy", lambda c: {"tableBucketARN": c.arn}, lambda c: {"tableBucketARN": BAD_ARN}),
    Op("PutTablePolicy", lambda c: c.ids(resourcePolicy=POLICY), lambda c: c.ids(resourcePolicy="{not json")),
    Op("GetTablePolicy", lambda c: c.ids(), lambda c: c.ids(namespace=BAD_NS)),
    Op("PutTableRecordExpirationConfiguration",
       lambda c: {"tableArn": c.table_arn, "value": {"status": "enabled", "settings": {"days": 7}}},
       lambda c: {"tableArn": c.table_arn, "value": {"status": "sometimes", "settings": {"days": 7}}}),
    Op("GetTableRecordExpirationConfiguration", lambda c: {"tableArn": c.table_arn},
       lambda c: {"tableArn": "arn:aws:s3tables:nowhere"}),
    Op("GetTableRecordExpirationJobStatus", lambda c: {"tableArn": c.table_arn},
       lambda c: {"tableArn": "arn:aws:s3tables:nowhere"}),
    Op("PutTableBucketReplication",
       lambda c: {"tableBucketARN": c.arn, "configuration": _replication(c, bucket_arn("census-destination"))},
       lambda c: {"tableBucketARN": c.arn, "configuration": _replication(c, c.arn)},
       after=lambda c, r: setattr(c, "replication_token", r["versionToken"])),
    Op("GetTableBucketReplication", lambda c: {"tableBucketARN": c.arn}, lambda c: {"tableBucketARN": BAD_ARN}),
    Op("PutTableReplication",
       lambda c: {"tableArn": c.table_arn, "configuration": _replication(c, bucket_arn("census-destination"))},
       lambda c: {"tableArn": c.table_arn, "configuration": _replication(
           c, bucket_arn("census-destination"), "arn:aws:iam::111122223333:user/not-a-role")},
       after=lambda c, r: setattr(c, "table_replication_token", r["versionToken"])),
    Op("GetTableReplication", lambda c: {"tableArn": c.table_arn},
       lambda c: {"tableArn": "arn:aws:s3tables:nowhere"}),
    Op("GetTableReplicationStatus", lambda c: {"tableArn": c.table_arn},
       lambda c: {"tableArn": "arn:aws:s3tables:nowhere"}),
    Op("DeleteTableReplication", lambda c: {"tableArn": c.table_arn, "versionToken": c.table_replication_token},
       lambda c: {"tableArn": c.table_arn, "versionToken": "made-up-token"}, ("ConflictException", 409)),
    Op("DeleteTableBucketReplication", lambda c: {"tableBucketARN": c.arn, "versionToken": c.replication_token},
       lambda c: {"tableBucketARN": c.arn, "versionToken": "made-up-token"}, ("ConflictException", 409)),
    Op("DisassociateTableReplication", lambda c: {"tableArn": c.replica_arn},
       lambda c: {"tableArn": c.table_arn}, before=_make_replica, after=_drop_replica),
    Op("PutTableBucketStorageClass",
       lambda c: {"tableBucketARN": c.arn, "storageClassConfiguration": {"storageClass": "STANDARD"}},
       lambda c: {"tableBucketARN": c.arn, "storageClassConfiguration": {"storageClass": "GLACIER"}}),
    Op("GetTableBucketStorageClass", lambda c: {"tableBucketARN": c.arn}, lambda c: {"tableBucketARN": BAD_ARN}),
    Op("GetTableStorageClass", lambda c: c.ids(), lambda c: c.ids(namespace=BAD_NS)),
    Op("TagResource", lambda c: {"resourceArn": c.arn, "tags": {"team": "census"}},
       lambda c: {"resourceArn": c.arn, "tags": {"aws:reserved": "x"}}),
    Op("ListTagsForResource", lambda c: {"resourceArn": c.arn}, lambda c: {"resourceArn": BAD_ARN}),
    Op("UntagResource", lambda c: {"resourceArn": c.arn, "tagKeys": ["team"]},
       lambda c: {"resourceArn": BAD_ARN, "tagKeys": ["team"]}),
    Op("RenameTable", lambda c: c.ids(newName=c.table + "_renamed"), lambda c: c.ids(newName="Not-A-Table"),
       after=_renamed),
    Op("DeleteTablePolicy", lambda c: c.ids(), lambda c: c.ids(namespace=BAD_NS)),
    Op("DeleteTableBucketPolicy", lambda c: {"tableBucketARN": c.arn}, lambda c: {"tableBucketARN": BAD_ARN}),
    Op("DeleteTableBucketMetricsConfiguration", lambda c: {"tableBucketARN": c.arn},
       lambda c: {"tableBucketARN": BAD_ARN}),
    Op("DeleteTableBucketEncryption", lambda c: {"tableBucketARN": c.arn}, lambda c: {"tableBucketARN": BAD_ARN}),
    Op("DeleteTable", lambda c: c.ids(), lambda c: c.ids(versionToken="made-up-token"), ("ConflictException", 409)),
    Op("DeleteNamespace", lambda c: {"tableBucketARN": c.arn, "namespace": c.ns},
       lambda c: {"tableBucketARN": c.arn, "namespace": BAD_NS}),
    Op("DeleteTableBucket", lambda c: {"tableBucketARN": c.arn}, lambda c: {"tableBucketARN": BAD_ARN}),
]


def model_operations() -> set[str]:
    return set(botocore.session.get_session().get_service_model("s3tables").operation_names)


def snake(name: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


def test_every_model_operation_is_listed():
    served = [op.name for op in SERVED]
    assert len(served) == len(set(served)), "an operation is listed twice"
    assert not set(served) & set(UNSERVED), set(served) & set(UNSERVED)
    missing = model_operations() - set(served) - set(UNSERVED)
    assert not missing, f"botocore's model has operations this census does not know: {sorted(missing)}"
    unknown = (set(served) | set(UNSERVED)) - model_operations()
    assert not unknown, f"not in botocore's model: {sorted(unknown)}"


def test_every_served_operation_takes_valid_input_and_refuses_an_invalid_parameter(s3tables):
    ctx = Ctx()
    ctx.client = s3tables
    ctx.s3tables, ctx.tables_url = s3tables, s3tables.meta.endpoint_url
    wrong = []
    try:
        for op in SERVED:
            op.before(ctx)
            call = getattr(s3tables, snake(op.name))
            # The invalid call comes first: it must change nothing the valid one relies on.
            try:
                call(**op.invalid(ctx))
                wrong.append(f"{op.name}: an invalid parameter was accepted")
            except ClientError as e:
                got = (e.response["Error"]["Code"], e.response["ResponseMetadata"]["HTTPStatusCode"])
                if got != op.error:
                    wrong.append(f"{op.name}: an invalid parameter got {got}, not {op.error}: "
                                 f"{e.response['Error'].get('Message')}")
            if op.raw_path:
                answer = signed_request(ctx.tables_url, "POST", op.raw_path, op.valid(ctx))
                assert 200 <= answer.status_code < 300, (op.name, answer.text)
                resp = answer.json()
            else:
                resp = call(**op.valid(ctx))
                assert 200 <= resp["ResponseMetadata"]["HTTPStatusCode"] < 300, (op.name, resp)
            op.after(ctx, resp)
        assert not wrong, "\n".join(wrong)
    finally:
        for arn in [ctx.arn, *ctx.cleanup]:
            try:
                purge_bucket(s3tables, arn)
            except Exception:  # noqa: BLE001 - the census deleted it already
                pass


@pytest.mark.parametrize("name", sorted(UNSERVED))
def test_unserved_operations_refuse(s3tables, name):
    """A call the server does not serve yet gets the control plane's error format and says so; it is never a
    silent success."""
    shape = botocore.session.get_session().get_service_model("s3tables").operation_model(name).input_shape
    values = {"tableBucketARN": bucket_arn("nowhere"), "tableArn": bucket_arn("nowhere") + "/table/t",
              "resourceArn": bucket_arn("nowhere"), "namespace": "ns", "name": "tbl", "tableBucketArn":
              bucket_arn("nowhere"), "sourceTableArn": bucket_arn("nowhere") + "/table/t",
              "sourceTableARN": bucket_arn("nowhere") + "/table/t"}
    params = {}
    for member in shape.required_members:
        kind = shape.members[member].type_name
        if member in values:
            params[member] = values[member]
        elif kind == "string":
            params[member] = "x" * max(3, shape.members[member].metadata.get("min", 1))
        elif kind == "structure":
            params[member] = {}
        elif kind == "list":
            params[member] = []
        elif kind == "integer":
            params[member] = 1
    call = getattr(make_client(s3tables.meta.endpoint_url, parameter_validation=False), snake(name))
    with pytest.raises(Exception) as refused:
        call(**params)
    err = getattr(refused.value, "response", {}).get("Error", {})
    status = getattr(refused.value, "response", {}).get("ResponseMetadata", {}).get("HTTPStatusCode")
    assert status in (400, 405) and "not supported" in err.get("Message", ""), (name, status, err)


def test_the_operations_page_lists_every_operation_with_its_status():
    rows = {}
    for line in DOC.read_text().splitlines():
        m = re.match(r"\|\s*`(\w+)`\s*\|\s*(served|not yet)\s*\|", line)
        if m:
            rows[m.group(1)] = m.group(2)
    assert set(rows) == model_operations(), sorted(set(rows) ^ model_operations())
    wrong = {name: status for name, status in rows.items() if (status == "served") != (name not in UNSERVED)}
    assert not wrong, f"docs/s3tables-operations.md disagrees with the census: {wrong}"
