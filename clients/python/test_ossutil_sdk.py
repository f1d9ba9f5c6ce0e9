"""Tablebay through Alibaba's OSS SDK V2 for Python (`alibabacloud-oss-v2` 1.4.1), the Tables client that the guide's
`ossutil tables-api` commands correspond to (ossutil is built on the Go SDK, whose signer builds the same
canonical requests for these; see reference/oss-v4-tables-signing.md). Requests are OSS V4-signed
(`OSS4-HMAC-SHA256`, product `osstables`), and every error comes back in the OSS shape the SDK parses:
`Content-Type: application/json`, `x-oss-error-type`, `{"message": …}`, `x-oss-request-id` (issue 16).

Covered: the guide's three commands and maintenance settings, every operation of the SDK's Tables client and its
paginators, the three ways the SDK addresses the server (an IP endpoint, which forces path style; a host name with
`use_path_style`; and the default virtual-hosted style, `<bucket>-<account>.<endpoint host>`), the query
(presigned) form, temporary credentials from `/sts`, bad signatures and bodies (refused, nothing changed), and a
table made by the SDK then written by PyIceberg and read by DuckDB.

Virtual hosts: the endpoint host is `tables.localhost` — a name (an IP endpoint would make the SDK fall back to
path style) under `.localhost`, which is reserved for loopback, resolved to 127.0.0.1 inside this process only
(`loopback_names`). The server needs no endpoint setting: it reads a host whose first label ends in
`-<12 to 16 digits>` as `<bucket>-<account>` and only checks it against the ARN in the path (or GetTable's query),
which is what the SDK signs with.
"""

from __future__ import annotations

import base64
import datetime as dt
import hashlib
import json
import time
from types import SimpleNamespace
from urllib.parse import quote, urlsplit

import boto3
import pyarrow as pa
import pytest
from alibabacloud_oss_v2 import exceptions as oss_errors
from botocore.config import Config

import oss4_vectors
from tablebay_test import ACCESS_KEY_ID, ACCOUNT_ID, REGION, SECRET_ACCESS_KEY
from tablebay_test.clients import make_client
from tablebay_test.expect import (
    FORBIDDEN_CODES, WAREHOUSE_RE, bucket_arn, metadata_location_re, new_metadata_location, purge_bucket,
    table_arn_re, unique,
)
from tablebay_test.iceberg import duckdb_attach, duckdb_connect, rest_catalog
from tablebay_test.oss import (
    GUIDE_COMPACTION, GUIDE_FILE_REMOVAL, GUIDE_SCHEMA, SdkSigner, configuration, declare_payload_sha256,
    loopback_names, models, oss_error, table_metadata, tables_client,
)
from tablebay_test.samples import BUCKET_MAINTENANCE_DEFAULTS, policy_document
from tablebay_test.server import TablebayServer

ENDPOINT_HOST = "tables.localhost"
# No maintenance workers: job status stays `Not_Yet_Run`. One-second STS sessions: expiry is observable.
# (Nothing about virtual hosts: the server recognises them by their shape.)
SERVER_ARGS = ("--maintenance-workers", "0", "--sts-min-duration-secs", "1")

# Authentication failures are 403s (as on the SigV4 side); a body that contradicts its declared digest is a 400.
AUTH_FAILURE = (403, FORBIDDEN_CODES)
BAD_BODY = (400, "BadRequestException")

NOT_YET_RUN = {"status": "Not_Yet_Run"}
AES256 = models.EncryptionConfiguration(sse_algorithm="AES256")
KMS = models.EncryptionConfiguration(sse_algorithm="aws:kms",
                                     kms_key_arn=f"arn:aws:kms:{REGION}:{ACCOUNT_ID}:key/1234abcd-12ab-34cd")


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """This module's server, OSS ARN flavor: the SDK refuses any bucket ARN that does not start with `acs:`."""
    srv = TablebayServer(tmp_path_factory.mktemp("tablebay-oss4"), arn_flavor="oss", extra_args=SERVER_ARGS)
    srv.start()
    yield srv
    srv.stop()


@pytest.fixture(scope="module")
def resolved():
    """`*.tables.localhost` → 127.0.0.1 for the module; the names the SDK connected to."""
    with loopback_names(ENDPOINT_HOST) as names:
        yield names


def sdk(server, style: str = "ip", **kw):
    """The SDK's Tables client for `server`: `ip` (http://127.0.0.1:port, path style forced by the SDK), `path`
    (http://tables.localhost:port with use_path_style) or `virtual` (the SDK's default addressing)."""
    port = urlsplit(server.tables_url).port
    host = "127.0.0.1" if style == "ip" else ENDPOINT_HOST
    return tables_client(f"http://{host}:{port}", path_style=style == "path", **kw)


@pytest.fixture(scope="module")
def boto(server):
    """boto3 `s3tables` for set-up checks and clean-up (a second, independent client)."""
    return make_client(server.tables_url)


@pytest.fixture(params=["ip", "path", "virtual"])
def style(request, resolved):
    """Each addressing style of `sdk` (names under tables.localhost resolve while the module runs)."""
    return request.param


@pytest.fixture
def client(server, style):
    return sdk(server, style)


def create_bucket(client, name: str) -> str:
    return client.create_table_bucket(models.CreateTableBucketRequest(name=name)).arn


@pytest.fixture
def bucket(client, boto):
    name = unique("sdk")
    arn = create_bucket(client, name)
    yield SimpleNamespace(name=name, arn=arn)
    purge_bucket(boto, arn)


@pytest.fixture
def namespace(client, bucket):
    name = unique("ns", "_")
    client.create_namespace(models.CreateNamespaceRequest(table_bucket_arn=bucket.arn, namespace=[name]))
    return name


def table_ids(arn: str, namespace: str, name: str) -> dict:
    return {"table_bucket_arn": arn, "namespace": namespace, "name": name}


def assert_no_bucket(boto, *names: str) -> None:
    """Nothing was created under any of `names`."""
    for name in names:
        assert boto.list_table_buckets(prefix=name)["tableBuckets"] == [], name


def utcnow() -> dt.datetime:
    return dt.datetime.now(dt.timezone.utc)


def paged(pages, member: str, size: int) -> list:
    """Every item of a paginator's pages, in order, checking that no page is larger than `size` and that only
    the last page is without a continuation token."""
    pages = list(pages)
    assert pages and all(len(getattr(p, member) or []) <= size for p in pages), pages
    assert all(p.continuation_token for p in pages[:-1]) and not pages[-1].continuation_token
    return [item for p in pages for item in getattr(p, member) or []]


# --- the guide ---------------------------------------------------------------------------------------------

def test_guide_commands(client, server, boto):
    """create-table-bucket, create-namespace, create-table --metadata file://schema.json, then the guide's
    maintenance settings (bucket: unreferenced-file removal 4/10; table: compaction 256) and the job status."""
    name = unique("guide")
    arn = create_bucket(client, name)
    try:
        assert arn == bucket_arn(name, "oss")
        ns = client.create_namespace(models.CreateNamespaceRequest(table_bucket_arn=arn, namespace=["kafka_ns"]))
        assert (ns.table_bucket_arn, ns.namespace) == (arn, ["kafka_ns"])
        ids = table_ids(arn, "kafka_ns", "events")
        created = client.create_table(models.CreateTableRequest(
            **ids, format="ICEBERG", metadata=table_metadata(GUIDE_SCHEMA)))
        assert table_arn_re(arn).match(created.table_arn), created.table_arn
        assert created.version_token

        got = client.get_table(models.GetTableRequest(table_arn=created.table_arn))
        assert (got.name, got.namespace, got.format, got.table_arn) == (
            "events", ["kafka_ns"], "ICEBERG", created.table_arn)
        assert WAREHOUSE_RE.match(got.warehouse_location), got.warehouse_location
        assert metadata_location_re(got.warehouse_location, 0).match(got.metadata_location), got.metadata_location
        schema = rest_catalog(server, arn).load_table(("kafka_ns", "events")).schema()
        assert [(f.name, str(f.field_type), f.required) for f in schema.fields] == [
            ("event_id", "string", True), ("event_time", "string", False), ("event_type", "string", False)]

        client.put_table_bucket_maintenance_configuration(models.PutTableBucketMaintenanceConfigurationRequest(
            table_bucket_arn=arn, type="icebergUnreferencedFileRemoval", value=GUIDE_FILE_REMOVAL))
        client.put_table_maintenance_configuration(models.PutTableMaintenanceConfigurationRequest(
            **ids, type="icebergCompaction", value=GUIDE_COMPACTION))
        bucket_config = client.get_table_bucket_maintenance_configuration(
            models.GetTableBucketMaintenanceConfigurationRequest(table_bucket_arn=arn))
        assert bucket_config.table_bucket_arn == arn
        assert configuration(bucket_config) == {"icebergUnreferencedFileRemoval": GUIDE_FILE_REMOVAL}
        table_config = client.get_table_maintenance_configuration(
            models.GetTableMaintenanceConfigurationRequest(**ids))
        assert table_config.table_arn == created.table_arn
        # The leaf the guide leaves out is filled in with its default.
        assert configuration(table_config)["icebergCompaction"] == {
            "status": "enabled", "settings": {"icebergCompaction": {"targetFileSizeMB": 256, "strategy": "auto"}}}

        job = client.get_table_maintenance_job_status(models.GetTableMaintenanceJobStatusRequest(
            **ids, table_arn=created.table_arn))
        assert job.table_arn == created.table_arn
        assert job.status == {"icebergCompaction": NOT_YET_RUN, "icebergSnapshotManagement": NOT_YET_RUN,
                              "icebergUnreferencedFileRemoval": NOT_YET_RUN}
    finally:
        purge_bucket(boto, arn)


# --- every operation of the SDK's Tables client --------------------------------------------------------------

def test_table_buckets_and_paginator(client, boto):
    prefix = unique("pg")
    names = [f"{prefix}-{i}" for i in range(3)]
    arns = [create_bucket(client, name) for name in names]
    try:
        # The page size goes in the request: this paginator's `limit` sets a misspelt attribute
        # (`max_table_buckets`) in 1.4.1 and is never sent.
        pages = client.list_table_buckets_paginator().iter_page(
            models.ListTableBucketsRequest(prefix=prefix, max_buckets=1))
        assert [b.arn for b in paged(pages, "table_buckets", 1)] == arns  # in name order

        got = client.get_table_bucket(models.GetTableBucketRequest(table_bucket_arn=arns[0]))
        assert (got.arn, got.name, got.owner_account_id) == (arns[0], names[0], ACCOUNT_ID)
        assert got.table_bucket_id and got.created_at

        client.delete_table_bucket(models.DeleteTableBucketRequest(table_bucket_arn=arns[0]))
        with oss_error(404, "NotFoundException"):
            client.get_table_bucket(models.GetTableBucketRequest(table_bucket_arn=arns[0]))
        with oss_error(409, "ConflictException"):
            create_bucket(client, names[1])
    finally:
        for arn in arns:
            purge_bucket(boto, arn)


def test_namespaces_and_paginator(client, bucket):
    names = sorted(unique("ns", "_") for _ in range(3))
    for name in names:
        created = client.create_namespace(models.CreateNamespaceRequest(table_bucket_arn=bucket.arn, namespace=[name]))
        assert created.namespace == [name]
    pages = client.list_namespaces_paginator(limit=2).iter_page(
        models.ListNamespacesRequest(table_bucket_arn=bucket.arn))
    assert [n.namespace for n in paged(pages, "namespaces", 2)] == [[name] for name in names]

    got = client.get_namespace(models.GetNamespaceRequest(table_bucket_arn=bucket.arn, namespace=names[0]))
    assert (got.namespace, got.owner_account_id) == ([names[0]], ACCOUNT_ID)
    client.delete_namespace(models.DeleteNamespaceRequest(table_bucket_arn=bucket.arn, namespace=names[0]))
    with oss_error(404, "NotFoundException"):
        client.get_namespace(models.GetNamespaceRequest(table_bucket_arn=bucket.arn, namespace=names[0]))
    # Hyphens are not allowed (the guide's warning): a 400, in the OSS shape too.
    with oss_error(400, "BadRequestException"):
        client.create_namespace(models.CreateNamespaceRequest(table_bucket_arn=bucket.arn, namespace=["bad-name"]))


def test_tables_paginator_lookups_and_version_tokens(client, bucket, namespace):
    names = ["t_a", "t_b", "t_c"]
    created = {n: client.create_table(models.CreateTableRequest(
        **table_ids(bucket.arn, namespace, n), format="ICEBERG")) for n in names}
    pages = client.list_tables_paginator(limit=1).iter_page(
        models.ListTablesRequest(table_bucket_arn=bucket.arn, namespace=namespace))
    listed = paged(pages, "tables", 1)
    assert [(t.name, t.table_arn) for t in listed] == [(n, created[n].table_arn) for n in names]

    ids = table_ids(bucket.arn, namespace, "t_a")
    first = created["t_a"]
    by_name = client.get_table(models.GetTableRequest(**ids))
    by_arn = client.get_table(models.GetTableRequest(table_arn=first.table_arn))
    assert by_name.table_arn == by_arn.table_arn == first.table_arn
    assert by_name.version_token == first.version_token

    location = client.get_table_metadata_location(models.GetTableMetadataLocationRequest(**ids))
    assert location.version_token == first.version_token and location.metadata_location is None
    target = new_metadata_location(location.warehouse_location, 1)
    updated = client.update_table_metadata_location(models.UpdateTableMetadataLocationRequest(
        **ids, version_token=first.version_token, metadata_location=target))
    assert (updated.metadata_location, updated.table_arn, updated.namespace) == (target, first.table_arn, [namespace])
    assert updated.version_token != first.version_token
    # The old token is stale now: updating, renaming and deleting with it conflict and change nothing.
    with oss_error(409, "ConflictException"):
        client.update_table_metadata_location(models.UpdateTableMetadataLocationRequest(
            **ids, version_token=first.version_token,
            metadata_location=new_metadata_location(location.warehouse_location, 2)))
    with oss_error(409, "ConflictException"):
        client.rename_table(models.RenameTableRequest(**ids, new_name="stale", version_token=first.version_token))
    with oss_error(409, "ConflictException"):
        client.delete_table(models.DeleteTableRequest(**ids, version_token=first.version_token))
    assert client.get_table_metadata_location(models.GetTableMetadataLocationRequest(**ids)).metadata_location \
        == target

    client.create_namespace(models.CreateNamespaceRequest(table_bucket_arn=bucket.arn, namespace=["archive"]))
    client.rename_table(models.RenameTableRequest(**ids, new_namespace_name="archive", new_name="renamed",
                                                  version_token=updated.version_token))
    moved = client.get_table(models.GetTableRequest(table_arn=first.table_arn))
    assert (moved.namespace, moved.name) == (["archive"], "renamed")
    with oss_error(404, "NotFoundException"):
        client.get_table(models.GetTableRequest(**ids))
    client.delete_table(models.DeleteTableRequest(**table_ids(bucket.arn, "archive", "renamed"),
                                                  version_token=moved.version_token))
    with oss_error(404, "NotFoundException"):
        client.get_table(models.GetTableRequest(table_arn=first.table_arn))


def test_policies(client, bucket, namespace):
    doc = policy_document("s3tables:GetTable")
    client.put_table_bucket_policy(models.PutTableBucketPolicyRequest(table_bucket_arn=bucket.arn, resource_policy=doc))
    got = client.get_table_bucket_policy(models.GetTableBucketPolicyRequest(table_bucket_arn=bucket.arn))
    assert json.loads(got.resource_policy) == json.loads(doc)
    client.delete_table_bucket_policy(models.DeleteTableBucketPolicyRequest(table_bucket_arn=bucket.arn))
    with oss_error(404, "NotFoundException"):
        client.get_table_bucket_policy(models.GetTableBucketPolicyRequest(table_bucket_arn=bucket.arn))

    ids = table_ids(bucket.arn, namespace, "t")
    client.create_table(models.CreateTableRequest(**ids, format="ICEBERG"))
    table_doc = policy_document("s3tables:GetTableData")
    client.put_table_policy(models.PutTablePolicyRequest(**ids, resource_policy=table_doc))
    assert json.loads(client.get_table_policy(models.GetTablePolicyRequest(**ids)).resource_policy) \
        == json.loads(table_doc)
    client.delete_table_policy(models.DeleteTablePolicyRequest(**ids))
    with oss_error(404, "NotFoundException"):
        client.get_table_policy(models.GetTablePolicyRequest(**ids))
    with oss_error(400, "BadRequestException"):
        client.put_table_policy(models.PutTablePolicyRequest(**ids, resource_policy="{not json"))


def encryption_of(result) -> tuple:
    config = result.encryption_configuration
    return config.sse_algorithm, config.kms_key_arn


def test_encryption(client, boto):
    name = unique("enc")
    arn = client.create_table_bucket(models.CreateTableBucketRequest(name=name, encryption_configuration=KMS)).arn
    try:
        request = models.GetTableBucketEncryptionRequest(table_bucket_arn=arn)
        assert encryption_of(client.get_table_bucket_encryption(request)) == (KMS.sse_algorithm, KMS.kms_key_arn)
        client.create_namespace(models.CreateNamespaceRequest(table_bucket_arn=arn, namespace=["ns"]))
        client.create_table(models.CreateTableRequest(**table_ids(arn, "ns", "inherits"), format="ICEBERG"))

        client.put_table_bucket_encryption(models.PutTableBucketEncryptionRequest(
            table_bucket_arn=arn, encryption_configuration=AES256))
        assert encryption_of(client.get_table_bucket_encryption(request)) == ("AES256", None)
        client.put_table_bucket_encryption(models.PutTableBucketEncryptionRequest(
            table_bucket_arn=arn, encryption_configuration=KMS))
        client.delete_table_bucket_encryption(models.DeleteTableBucketEncryptionRequest(table_bucket_arn=arn))
        # Back to the default (AWS: SSE-S3) or none at all (OSS: a 404), as test_encryption.py allows.
        try:
            after = encryption_of(client.get_table_bucket_encryption(request))
        except oss_errors.OperationError as e:
            assert e.unwrap().status_code == 404, e
            after = None
        assert after in (("AES256", None), None)
        # The table kept the bucket's default of its creation time.
        table = client.get_table_encryption(models.GetTableEncryptionRequest(**table_ids(arn, "ns", "inherits")))
        assert encryption_of(table) == (KMS.sse_algorithm, KMS.kms_key_arn)
        with oss_error(400, "BadRequestException"):
            client.put_table_bucket_encryption(models.PutTableBucketEncryptionRequest(
                table_bucket_arn=arn, encryption_configuration=models.EncryptionConfiguration(sse_algorithm="DES")))
    finally:
        purge_bucket(boto, arn)


def test_bucket_maintenance_defaults(client, bucket):
    got = client.get_table_bucket_maintenance_configuration(
        models.GetTableBucketMaintenanceConfigurationRequest(table_bucket_arn=bucket.arn))
    assert configuration(got) == BUCKET_MAINTENANCE_DEFAULTS


# --- addressing --------------------------------------------------------------------------------------------

def test_virtual_hosted_requests_go_to_bucket_hosts(server, resolved, boto):
    client = sdk(server, "virtual")
    name = unique("vh")
    arn = create_bucket(client, name)
    try:
        client.create_namespace(models.CreateNamespaceRequest(table_bucket_arn=arn, namespace=["ns"]))
        created = client.create_table(models.CreateTableRequest(**table_ids(arn, "ns", "t"), format="ICEBERG"))
        # GetTable by table ARN: the SDK takes the bucket (and its host) from the table ARN.
        assert client.get_table(models.GetTableRequest(table_arn=created.table_arn)).name == "t"
    finally:
        purge_bucket(boto, arn)
    assert ENDPOINT_HOST in resolved  # CreateTableBucket names no bucket: the endpoint host itself
    assert f"{name}-{ACCOUNT_ID}.{ENDPOINT_HOST}" in resolved


def on_host(label: str):
    """`after_sign`: send the request to `<label>.tables.localhost` instead (the host is not signed)."""
    def change(request):
        url = urlsplit(request.url)
        request.url = url._replace(netloc=f"{label}.{ENDPOINT_HOST}:{url.port}").geturl()
    return change


@pytest.mark.parametrize("label", ["other-{account}", "{name}-999999999999"], ids=["other-bucket", "other-account"])
def test_virtual_host_must_agree_with_the_arn(server, resolved, boto, label):
    name = unique("vhx")
    arn = boto.create_table_bucket(name=name)["arn"]
    try:
        elsewhere = on_host(label.format(name=name, account=ACCOUNT_ID))
        client = sdk(server, "virtual", signer=SdkSigner(after_sign=elsewhere))
        with oss_error(400, "BadRequestException"):
            client.create_namespace(models.CreateNamespaceRequest(table_bucket_arn=arn, namespace=["ns"]))
        assert boto.list_namespaces(tableBucketARN=arn)["namespaces"] == []
    finally:
        purge_bucket(boto, arn)


# --- the query (presigned) form ----------------------------------------------------------------------------

def test_query_form(server, style, bucket):
    presigned = sdk(server, style, signer=SdkSigner(expires=600))
    got = presigned.get_table_bucket(models.GetTableBucketRequest(table_bucket_arn=bucket.arn), auth_method="query")
    assert got.arn == bucket.arn
    listed = presigned.list_table_buckets(models.ListTableBucketsRequest(prefix=bucket.name), auth_method="query")
    assert [b.arn for b in listed.table_buckets] == [bucket.arn]


@pytest.mark.parametrize("start,expires", [
    (dt.timedelta(hours=-1), 60),
    (dt.timedelta(0), 7 * 24 * 3600 + 1),
], ids=["expired", "longer-than-7-days"])
def test_query_form_refused(server, style, bucket, start, expires):
    presigned = sdk(server, style, signer=SdkSigner(at=utcnow() + start, expires=expires))
    with oss_error(*AUTH_FAILURE):
        presigned.get_table_bucket(models.GetTableBucketRequest(table_bucket_arn=bucket.arn), auth_method="query")


# --- what must verify, and what must not --------------------------------------------------------------------

@pytest.mark.parametrize("auth_method", ["header", "query"])
def test_signed_payload_hash_and_additional_headers_verify(server, boto, auth_method):
    """What the SDK can sign beyond its defaults: a real x-oss-content-sha256, and additional headers (which
    Python SDK users cannot ask for: Config.additional_headers never reaches the signer in 1.4.1)."""
    signer = SdkSigner(before_sign=declare_payload_sha256, expires=300,
                       additional_headers=["X-Tablebay-Probe", "Cache-Control"])
    name = unique("signed")
    arn = sdk(server, signer=signer).create_table_bucket(models.CreateTableBucketRequest(
        name=name, headers={"X-Tablebay-Probe": "1", "Cache-Control": "no-cache"}), auth_method=auth_method).arn
    try:
        assert arn == bucket_arn(name, "oss")
        # The premise: the signature covered both.
        body_hash = hashlib.sha256(json.dumps({"name": name}).encode()).hexdigest()
        assert signer.canonical_request.endswith(f"\ncache-control;x-tablebay-probe\n{body_hash}")
    finally:
        purge_bucket(boto, arn)


def rewrite_authorization(old: str, new: str):
    def change(request):
        request.headers["Authorization"] = request.headers["Authorization"].replace(old, new)
    return change


def drop_signature(request):
    auth = request.headers["Authorization"]
    request.headers["Authorization"] = auth[:auth.index(",Signature=")]


def drop(header: str):
    def change(request):
        del request.headers[header]
    return change


def shift_oss_date(request):
    stamp = dt.datetime.strptime(request.headers["x-oss-date"], "%Y%m%dT%H%M%SZ") + dt.timedelta(seconds=1)
    request.headers["x-oss-date"] = stamp.strftime("%Y%m%dT%H%M%SZ")


def other_body(body: bytes) -> bytes:
    """The CreateTableBucket body naming `x<name>` instead of `<name>`."""
    return body.replace(b'"name": "', b'"name": "x')


def other_bucket_in_body(request):
    """`after_sign`: send `other_body` (the signature does not cover the body)."""
    request.body = other_body(request.body)


def md5_of_other_body(request):
    """`before_sign` for the payload-hash case: the signed x-oss-content-sha256 is the hash of the body as
    signed, but Content-MD5 matches `other_body`, which is what is sent: only the hash contradicts the body."""
    declare_payload_sha256(request)
    request.headers["Content-MD5"] = base64.b64encode(hashlib.md5(other_body(request.body)).digest()).decode()


PROBE = {"X-Tablebay-Probe": "1"}

# id → (signer options, client options, request headers, expected status and codes)
BAD_REQUESTS = {
    "unknown-component": ({"after_sign": rewrite_authorization(",Signature=", ",Foo=bar,Signature=")}, {}, {},
                          AUTH_FAILURE),
    "no-signature": ({"after_sign": drop_signature}, {}, {}, AUTH_FAILURE),
    "signature-not-hex": ({"after_sign": rewrite_authorization("Signature=", "Signature=zz")}, {}, {}, AUTH_FAILURE),
    "credential-without-terminator": (
        {"after_sign": rewrite_authorization("/osstables/aliyun_v4_request", "/osstables")}, {}, {}, AUTH_FAILURE),
    "wrong-product": ({"product": "oss"}, {}, {}, AUTH_FAILURE),
    "wrong-region": ({}, {"region": "cn-hangzhou"}, {}, AUTH_FAILURE),
    "no-x-oss-date": ({"after_sign": drop("x-oss-date")}, {}, {}, AUTH_FAILURE),
    "x-oss-date-changed": ({"after_sign": shift_oss_date}, {}, {}, AUTH_FAILURE),
    "content-md5-changed": ({"after_sign": lambda r: r.headers.update({"Content-MD5": "1B2M2Y8AsgTpgAmY7PhCfg=="})},
                            {}, {}, AUTH_FAILURE),
    "additional-header-absent": ({"additional_headers": ["X-Tablebay-Probe"], "after_sign": drop("X-Tablebay-Probe")},
                                 {}, PROBE, AUTH_FAILURE),
    "additional-header-changed": (
        {"additional_headers": ["X-Tablebay-Probe"],
         "after_sign": lambda r: r.headers.update({"X-Tablebay-Probe": "2"})}, {}, PROBE, AUTH_FAILURE),
    "clock-1h-behind": ({"clock_offset": -3600}, {}, {}, AUTH_FAILURE),
    "clock-1h-ahead": ({"clock_offset": 3600}, {}, {}, AUTH_FAILURE),
    "wrong-secret": ({}, {"secret_key": SECRET_ACCESS_KEY[:-1] + "X"}, {}, AUTH_FAILURE),
    "unknown-access-key": ({}, {"access_key": "LTAI5tTablebayUnknown"}, {}, AUTH_FAILURE),
    "body-vs-content-md5": ({"after_sign": other_bucket_in_body}, {}, {}, BAD_BODY),
    "body-vs-x-oss-content-sha256": ({"before_sign": md5_of_other_body, "after_sign": other_bucket_in_body}, {}, {},
                                     BAD_BODY),
}


@pytest.mark.parametrize("case", BAD_REQUESTS, ids=list(BAD_REQUESTS))
def test_bad_requests_are_refused_and_change_nothing(server, boto, case):
    signer_opts, client_opts, headers, expected = BAD_REQUESTS[case]
    client = sdk(server, signer=SdkSigner(**signer_opts), **client_opts)
    name = unique("bad")
    with oss_error(*expected):
        client.create_table_bucket(models.CreateTableBucketRequest(name=name, headers=dict(headers)))
    assert_no_bucket(boto, name, "x" + name)


def test_errors_of_the_service_are_in_the_oss_shape(client, bucket):
    """Not only authentication: every error answering an OSS V4 request is in the shape the SDK parses."""
    missing = bucket_arn(unique("missing"), "oss")
    with oss_error(404, "NotFoundException") as info:
        client.get_table_bucket(models.GetTableBucketRequest(table_bucket_arn=missing))
    assert info.value.unwrap().headers.get("Date"), "the SDK parses Date on every error"
    with oss_error(404, "NotFoundException"):
        client.create_table(models.CreateTableRequest(**table_ids(bucket.arn, "absent_ns", "t"), format="ICEBERG"))


# --- temporary credentials ----------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def sts(server):
    """boto3 STS at `<tables url>/sts` with the root credentials (as test_iam_clients.py gets sessions)."""
    session = boto3.session.Session(aws_access_key_id=ACCESS_KEY_ID, aws_secret_access_key=SECRET_ACCESS_KEY,
                                    region_name=REGION)
    # botocore checks DurationSeconds >= 900 itself; the server (1 s minimum here) is the judge.
    return session.client("sts", endpoint_url=f"{server.tables_url}/sts", config=Config(
        retries={"max_attempts": 1, "mode": "standard"}, parameter_validation=False))


def session_credentials(sts, seconds: int) -> dict:
    creds = sts.get_session_token(DurationSeconds=seconds)["Credentials"]
    return {"access_key": creds["AccessKeyId"], "secret_key": creds["SecretAccessKey"],
            "token": creds["SessionToken"]}


def test_temporary_credentials(server, sts, boto, resolved):
    creds = session_credentials(sts, 900)
    temporary = sdk(server, "virtual", **creds)
    name = unique("sts")
    arn = create_bucket(temporary, name)
    try:
        assert temporary.get_table_bucket(models.GetTableBucketRequest(table_bucket_arn=arn)).name == name
        # The query form carries the token as x-oss-security-token.
        presigned = sdk(server, signer=SdkSigner(expires=300), **creds)
        listed = presigned.list_table_buckets(models.ListTableBucketsRequest(prefix=name), auth_method="query")
        assert [b.arn for b in listed.table_buckets] == [arn]
    finally:
        purge_bucket(boto, arn)

    without_token = {**creds, "token": None}
    long_term_with_token = {"token": creds["token"]}
    other_token = {**creds, "token": creds["token"][:-4] + "AAAA"}
    for refused in (without_token, long_term_with_token, other_token):
        with oss_error(*AUTH_FAILURE):
            sdk(server, **refused).list_table_buckets(models.ListTableBucketsRequest())


def test_expired_session_is_refused(server, sts):
    short = sdk(server, **session_credentials(sts, 1))
    deadline = time.monotonic() + 20
    while True:
        try:
            short.list_table_buckets(models.ListTableBucketsRequest())
        except Exception:  # noqa: BLE001 (the check below is the assertion)
            break
        assert time.monotonic() < deadline, "the session never expired"
        time.sleep(0.2)
    with oss_error(*AUTH_FAILURE):
        short.list_table_buckets(models.ListTableBucketsRequest())


# --- SDK → PyIceberg → DuckDB ------------------------------------------------------------------------------

EVENTS = [("e1", "2026-06-01T12:00:00Z", "click"), ("e2", "2026-06-01T12:00:01Z", "view"),
          ("e3", "2026-06-01T12:00:02Z", "click")]


def test_sdk_table_written_by_pyiceberg_read_by_duckdb(server, boto, data_plane, tmp_path):
    client = sdk(server)
    name = unique("lake")
    arn = create_bucket(client, name)
    try:
        client.create_namespace(models.CreateNamespaceRequest(table_bucket_arn=arn, namespace=["kafka_ns"]))
        ids = table_ids(arn, "kafka_ns", "events")
        client.create_table(models.CreateTableRequest(**ids, format="ICEBERG", metadata=table_metadata(GUIDE_SCHEMA)))
        before = client.get_table_metadata_location(models.GetTableMetadataLocationRequest(**ids))

        table = rest_catalog(server, arn).load_table(("kafka_ns", "events"))
        columns = list(zip(*EVENTS))
        table.append(pa.table(
            {"event_id": columns[0], "event_time": columns[1], "event_type": columns[2]},
            schema=pa.schema([pa.field("event_id", pa.string(), nullable=False),
                              pa.field("event_time", pa.string()), pa.field("event_type", pa.string())])))

        con = duckdb_connect(tmp_path / "duckdb-extensions")
        try:
            duckdb_attach(con, server, arn)
            got = con.execute("SELECT event_id, event_time, event_type FROM cat.kafka_ns.events "
                              "ORDER BY event_id").fetchall()
        finally:
            con.close()
        assert got == EVENTS

        # The SDK sees the commit: the metadata location PyIceberg wrote, and a new version token.
        after = client.get_table_metadata_location(models.GetTableMetadataLocationRequest(**ids))
        assert after.metadata_location == table.metadata_location != before.metadata_location
        assert after.version_token != before.version_token
    finally:
        purge_bucket(boto, arn)


# --- the known-answer vectors ------------------------------------------------------------------------------

def test_vectors_fixture_is_what_the_sdk_signs():
    """crates/tablebay-auth/tests/fixtures/oss4_vectors.json is exactly what the pinned SDK produces (no server)."""
    assert oss4_vectors.FIXTURE.read_text() == oss4_vectors.render(), \
        "stale fixture: run python clients/python/oss4_vectors.py"


# --- the other surfaces of the tables listener ---------------------------------------------------------------

def oss4_signed(server, method: str, path: str, body: bytes = b"", headers: dict | None = None,
                signer: SdkSigner | None = None):
    """`path` on the tables listener signed by the SDK's own `TablesSignerV4` as its Tables client signs an
    operation without a bucket (key = the path), sent with requests."""
    import requests
    from alibabacloud_oss_v2.credentials import StaticCredentialsProvider
    from alibabacloud_oss_v2.types import HttpRequest, SigningContext

    url = f"{server.tables_url}{path}"
    request = HttpRequest(method, url, headers={"Content-Type": "application/json", **(headers or {})},
                          body=body or None)
    context = SigningContext(product="osstables", region=REGION, key=urlsplit(path).path.lstrip("/"),
                             request=request,
                             credentials=StaticCredentialsProvider(ACCESS_KEY_ID, SECRET_ACCESS_KEY)
                             .get_credentials())
    (signer or SdkSigner()).sign(context)
    return requests.request(method, request.url, headers=dict(request.headers), data=body or None, timeout=30)


@pytest.mark.parametrize("method,path,body,content_type,expect", [
    ("GET", "/iceberg/v1/{bucket}/namespaces", b"", "application/json", "namespaces"),
    ("GET", "/admin/users", b"", "application/json", "users"),
    ("POST", "/sts", b"Action=GetCallerIdentity&Version=2011-06-15", "application/x-www-form-urlencoded",
     "GetCallerIdentityResult"),
])
def test_every_surface_of_the_tables_listener_takes_oss4(server, bucket, method, path, body, content_type, expect):
    path = path.format(bucket=quote(bucket.arn, safe=""))
    answer = oss4_signed(server, method, path, body, {"Content-Type": content_type})
    assert answer.status_code == 200, answer.text
    assert expect in answer.text
    assert answer.headers.get("x-oss-request-id")


def test_a_bad_oss4_signature_on_iceberg_is_refused_in_the_oss_shape(server, bucket):
    stale = SdkSigner(after_sign=lambda request: request.headers.update({"x-oss-date": "20200101T000000Z"}))
    answer = oss4_signed(server, "GET", f"/iceberg/v1/{quote(bucket.arn, safe='')}/namespaces", signer=stale)
    assert answer.status_code == 403, answer.text
    assert answer.headers.get("x-oss-error-type")
    assert answer.headers.get("x-oss-request-id")
