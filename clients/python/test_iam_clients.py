"""Access control with real clients (issue 7): `tablebay admin` creates a user, `aws sts get-session-token`,
`get-caller-identity` and `assume-role` (with a session policy) against `<tables endpoint>/sts`, boto3 using
session credentials on the control plane and on the S3 data plane (read-only user: reads, cannot write; expired
credentials refused), and PyIceberg reading and writing a table with nothing but catalog credentials, through the
credentials the catalog vends (its own `s3.*` keys are deliberately wrong).
"""

from __future__ import annotations

import json
import os
import subprocess
import time

import boto3
import pyarrow as pa
import pytest
from botocore.config import Config
from botocore.exceptions import ClientError
from pyiceberg.schema import Schema
from pyiceberg.types import LongType, NestedField, StringType

from tablebay_test import ACCESS_KEY_ID, ACCOUNT_ID, REGION, SECRET_ACCESS_KEY
from tablebay_test.cli import AwsCli, aws_executable
from tablebay_test.clients import make_client
from tablebay_test.expect import unique
from tablebay_test.iceberg import rest_catalog
from tablebay_test.server import TablebayServer, binary_path

CFG = Config(retries={"max_attempts": 1, "mode": "standard"}, s3={"addressing_style": "path"})


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """A server that accepts one-second STS sessions, so that expiry can be observed."""
    srv = TablebayServer(tmp_path_factory.mktemp("tablebay-iam"), arn_flavor="aws",
                         extra_args=("--sts-min-duration-secs", "1"))
    srv.start()
    yield srv
    srv.stop()


def admin(server, *args: str) -> dict:
    """`tablebay admin …` as the instance root; its JSON answer."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AWS_", "TABLEBAY_"))}
    env.update(AWS_ACCESS_KEY_ID=ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY=SECRET_ACCESS_KEY,
               TABLEBAY_ENDPOINT=server.tables_url, TABLEBAY_REGION=REGION)
    proc = subprocess.run([str(binary_path()), "admin", *args], env=env, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, f"tablebay admin {args}: {proc.stdout} {proc.stderr}"
    return json.loads(proc.stdout)


def new_user(server, policy: dict | None) -> tuple[str, str, str]:
    """A user with a key (and an identity policy); (name, key id, secret)."""
    name = unique("user")
    admin(server, "create-user", name)
    key = admin(server, "create-access-key", name)
    if policy is not None:
        admin(server, "put-user-policy", name, "main", "--document", json.dumps(policy))
    return name, key["accessKeyId"], key["secretAccessKey"]


def allow(*actions: str, resource: str = "*") -> dict:
    return {"Version": "2012-10-17",
            "Statement": [{"Effect": "Allow", "Action": list(actions), "Resource": resource}]}


class Sts(AwsCli):
    """`aws sts …` against `<tables url>/sts` (AwsCli runs `aws s3tables`)."""

    def sts(self, *args: str, token: str | None = None) -> dict:
        env = self.environment()
        if token:
            env["AWS_SESSION_TOKEN"] = token
        cmd = [aws_executable(), "sts", *args, "--endpoint-url", f"{self.endpoint_url}/sts", "--output", "json"]
        proc = subprocess.run(cmd, env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=120)
        assert proc.returncode == 0, f"aws sts {args}: {proc.stdout} {proc.stderr}"
        return json.loads(proc.stdout)

    def s3tables(self, *args: str, token: str | None = None) -> subprocess.CompletedProcess:
        env = self.environment()
        if token:
            env["AWS_SESSION_TOKEN"] = token
        cmd = [aws_executable(), "s3tables", *args, "--endpoint-url", self.endpoint_url, "--output", "json"]
        return subprocess.run(cmd, env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=120)


def s3_client(server, key: str, secret: str, token: str | None = None):
    return boto3.session.Session(aws_access_key_id=key, aws_secret_access_key=secret, aws_session_token=token,
                                 region_name=REGION).client("s3", endpoint_url=server.s3_url, config=CFG)


def table_home(server):
    """A bucket, namespace and table (root), and one object in the table's storage: (bucket ARN, table, storage)."""
    tables = make_client(server.tables_url)
    name = unique("iam")
    bucket_arn = tables.create_table_bucket(name=name)["arn"]
    tables.create_namespace(tableBucketARN=bucket_arn, namespace=["ns"])
    tables.create_table(tableBucketARN=bucket_arn, namespace="ns", name="t", format="ICEBERG")
    got = tables.get_table(tableBucketARN=bucket_arn, namespace="ns", name="t")
    storage = got["warehouseLocation"].removeprefix("s3://").rstrip("/")
    s3_client(server, ACCESS_KEY_ID, SECRET_ACCESS_KEY).put_object(Bucket=storage, Key="data/x", Body=b"hello")
    return bucket_arn, got, storage


def test_aws_cli_sts_get_session_token_and_assume_role(server, tmp_path):
    bucket_arn, _, _ = table_home(server)
    # sts:AssumeRole: assuming the role below takes the caller's own allow as well as the role's trust.
    name, key, secret = new_user(server, allow("s3tables:ListTableBuckets", "s3tables:GetTableBucket",
                                               "sts:AssumeRole"))
    cli = Sts(server.tables_url, tmp_path / "aws", access_key=key, secret_key=secret)

    me = cli.sts("get-caller-identity")
    assert me["Account"] == ACCOUNT_ID and me["Arn"] == f"arn:aws:iam::{ACCOUNT_ID}:user/{name}"

    creds = cli.sts("get-session-token", "--duration-seconds", "900")["Credentials"]
    assert creds["AccessKeyId"].startswith("TBAS") and creds["SessionToken"]
    session = Sts(server.tables_url, tmp_path / "aws2", access_key=creds["AccessKeyId"],
                  secret_key=creds["SecretAccessKey"])
    listed = session.s3tables("list-table-buckets", token=creds["SessionToken"])
    assert listed.returncode == 0, listed.stderr
    assert bucket_arn in listed.stdout
    # Without the token the temporary key is refused.
    refused = session.s3tables("list-table-buckets")
    assert refused.returncode != 0, refused.stdout

    # A role the user may assume, narrowed by a session policy to GetTableBucket only.
    role = admin(server, "create-role", unique("role"), "--trust-policy", json.dumps({
        "Version": "2012-10-17",
        "Statement": [{"Effect": "Allow", "Principal": {"AWS": f"arn:aws:iam::{ACCOUNT_ID}:user/{name}"},
                       "Action": "sts:AssumeRole"}]}))
    admin(server, "put-role-policy", role["roleName"], "all", "--document",
          json.dumps(allow("s3tables:ListTableBuckets", "s3tables:GetTableBucket")))
    assumed = cli.sts("assume-role", "--role-arn", role["roleArn"], "--role-session-name", "cli",
                      "--policy", json.dumps(allow("s3tables:GetTableBucket")))
    assert assumed["AssumedRoleUser"]["Arn"] == f"arn:aws:sts::{ACCOUNT_ID}:assumed-role/{role['roleName']}/cli"
    rc = assumed["Credentials"]
    as_role = Sts(server.tables_url, tmp_path / "aws3", access_key=rc["AccessKeyId"], secret_key=rc["SecretAccessKey"])
    got = as_role.s3tables("get-table-bucket", "--table-bucket-arn", bucket_arn, token=rc["SessionToken"])
    assert got.returncode == 0, got.stderr
    narrowed = as_role.s3tables("list-table-buckets", token=rc["SessionToken"])
    assert narrowed.returncode != 0 and "AccessDenied" in narrowed.stderr, narrowed.stderr


def test_boto3_session_credentials_read_only_and_expiry(server):
    bucket_arn, got, storage = table_home(server)
    _, key, secret = new_user(server, allow("s3tables:GetTableData", "s3tables:GetTable"))
    sts = boto3.session.Session(aws_access_key_id=key, aws_secret_access_key=secret, region_name=REGION).client(
        # botocore checks DurationSeconds >= 900 itself; the server (started with a 1 s minimum) is the judge here.
        "sts", endpoint_url=f"{server.tables_url}/sts", config=CFG.merge(Config(parameter_validation=False)))
    creds = sts.get_session_token(DurationSeconds=3600)["Credentials"]
    token = creds["SessionToken"]

    # Control plane with the session: GetTable yes, DeleteTable no (AccessDeniedException), nothing deleted.
    tables = boto3.session.Session(
        aws_access_key_id=creds["AccessKeyId"], aws_secret_access_key=creds["SecretAccessKey"],
        aws_session_token=token, region_name=REGION).client("s3tables", endpoint_url=server.tables_url, config=CFG)
    assert tables.get_table(tableBucketARN=bucket_arn, namespace="ns", name="t")["tableARN"] == got["tableARN"]
    with pytest.raises(ClientError) as denied:
        tables.delete_table(tableBucketARN=bucket_arn, namespace="ns", name="t")
    assert denied.value.response["Error"]["Code"] == "AccessDeniedException"
    assert make_client(server.tables_url).get_table(tableBucketARN=bucket_arn, namespace="ns", name="t")

    # Data plane: read yes, write no.
    s3 = s3_client(server, creds["AccessKeyId"], creds["SecretAccessKey"], token)
    assert s3.get_object(Bucket=storage, Key="data/x")["Body"].read() == b"hello"
    with pytest.raises(ClientError) as denied:
        s3.put_object(Bucket=storage, Key="data/y", Body=b"no")
    assert denied.value.response["Error"]["Code"] == "AccessDenied"
    # The wrong token: refused.
    forged = s3_client(server, creds["AccessKeyId"], creds["SecretAccessKey"], token[:-4] + "AAAA")
    with pytest.raises(ClientError) as bad:
        forged.get_object(Bucket=storage, Key="data/x")
    assert bad.value.response["Error"]["Code"] == "InvalidToken"

    # A one-second session stops working when it expires.
    short = sts.get_session_token(DurationSeconds=1)["Credentials"]
    s3_short = s3_client(server, short["AccessKeyId"], short["SecretAccessKey"], short["SessionToken"])
    deadline = time.monotonic() + 20
    while True:
        try:
            s3_short.get_object(Bucket=storage, Key="data/x")
        except ClientError as e:
            assert e.response["Error"]["Code"] == "ExpiredToken", e.response
            break
        assert time.monotonic() < deadline, "the session never expired"
        time.sleep(0.2)


def test_pyiceberg_reads_and_writes_with_vended_credentials_only(server):
    tables = make_client(server.tables_url)
    name = unique("vend")
    bucket_arn = tables.create_table_bucket(name=name)["arn"]
    _, key, secret = new_user(server, allow(
        "s3tables:GetTableBucket", "s3tables:CreateNamespace", "s3tables:GetNamespace", "s3tables:ListNamespaces",
        "s3tables:CreateTable", "s3tables:GetTable", "s3tables:GetTableMetadataLocation",
        "s3tables:UpdateTableMetadataLocation", "s3tables:GetTableData", "s3tables:PutTableData",
        "s3tables:ListTables", resource=f"{bucket_arn}*"))
    # Catalog credentials only: the FileIO's own keys are deliberately invalid, so every data file read or
    # written must use the credentials the catalog vends with each table.
    catalog = rest_catalog(server, bucket_arn, **{
        "client.access-key-id": key, "client.secret-access-key": secret,
        "s3.access-key-id": "TBAKNOTAREALKEY00000", "s3.secret-access-key": "wrong",
        "header.X-Iceberg-Access-Delegation": "vended-credentials",
    })
    catalog.create_namespace("ns")
    schema = Schema(NestedField(1, "id", LongType(), required=True), NestedField(2, "s", StringType()))
    table = catalog.create_table("ns.events", schema)
    rows = pa.table({"id": pa.array([1, 2, 3], pa.int64()), "s": ["a", "b", "c"]},
                    schema=pa.schema([pa.field("id", pa.int64(), nullable=False), pa.field("s", pa.string())]))
    table.append(rows)
    again = catalog.load_table("ns.events")
    assert sorted(again.scan().to_arrow()["id"].to_pylist()) == [1, 2, 3]
    assert again.io.properties["s3.access-key-id"].startswith("TBAS")

    # The same catalog without delegation uses its own (wrong) keys and cannot read the data.
    plain = rest_catalog(server, bucket_arn, **{
        "client.access-key-id": key, "client.secret-access-key": secret,
        "s3.access-key-id": "TBAKNOTAREALKEY00000", "s3.secret-access-key": "wrong",
        "header.X-Iceberg-Access-Delegation": "",
    })
    with pytest.raises(Exception):
        plain.load_table("ns.events").scan().to_arrow()
