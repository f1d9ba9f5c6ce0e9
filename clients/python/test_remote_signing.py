"""Remote signing (issue 19): PyIceberg asks for `X-Iceberg-Access-Delegation: remote-signing`, holds no working
S3 credentials (its `s3.access-key-id` / `s3.secret-access-key` are deliberately wrong), and has every data-plane
request signed by the catalog's signer (`s3.signer = S3V4RestSigner`, posting to `<uri>/v1/aws/s3/sign` with its
OAuth2 bearer token). It appends and reads back exactly.

The signer signs only what the caller may do to the table whose storage the URI is in: a read-only user's PUT,
another table's file, another host, an unsupported method are 403 in the Iceberg error model; a malformed body
is 400, a request with a bad bearer token 401 (and one with no credentials 403, as everywhere in the
catalog). docs/clients/pyiceberg.md shows this configuration.
"""

from __future__ import annotations

import json

import pyarrow as pa
import pytest
import requests
from pyiceberg.schema import Schema
from pyiceberg.types import LongType, NestedField, StringType

from tablebay_test import ACCESS_KEY_ID, REGION, SECRET_ACCESS_KEY
from tablebay_test.expect import unique
from tablebay_test.iceberg import (assert_error_model, catalog_prefix, catalog_uri, iceberg_request,
                                   oauth_rest_catalog)
from tablebay_test.signing import signed_request

# PyIceberg signs remotely only through its fsspec FileIO: s3fs must be there (requirements-nodeps.txt).
import s3fs  # noqa: E402,F401

pytestmark = pytest.mark.usefixtures("data_plane")

SCHEMA = Schema(
    NestedField(1, "id", LongType(), required=True),
    NestedField(2, "note", StringType(), required=False),
)
ARROW = pa.schema([pa.field("id", pa.int64(), nullable=False), pa.field("note", pa.string())])

# The client configuration docs/clients/pyiceberg.md gives for remote signing: OAuth2 to the catalog, the
# delegation header, fsspec's FileIO; the S3 keys are wrong on purpose (nothing may use them).
REMOTE_SIGNING = {
    "header.X-Iceberg-Access-Delegation": "remote-signing",
    "py-io-impl": "pyiceberg.io.fsspec.FsspecFileIO",
    "s3.access-key-id": "AKIAWRONGWRONGWRONG0",
    "s3.secret-access-key": "wrong-secret-wrong-secret-wrong-secret00",
}


def rows(ids) -> pa.Table:
    return pa.Table.from_pylist([{"id": i, "note": f"row-{i}"} for i in ids], schema=ARROW)


def admin(server, method: str, path: str, body=None):
    resp = signed_request(server.tables_url, method, "/admin" + path, body)
    assert resp.status_code == 200, f"{method} {path}: {resp.status_code} {resp.text[:300]}"
    return resp.json()


def bearer(server, key_id: str, secret: str) -> str:
    resp = requests.post(f"{catalog_uri(server)}/v1/oauth/tokens", data={
        "grant_type": "client_credentials", "client_id": key_id, "client_secret": secret, "scope": "catalog"})
    assert resp.status_code == 200, resp.text
    return resp.json()["access_token"]


def sign(server, token: str | None, body, path: str = "/v1/aws/s3/sign"):
    headers = {"Content-Type": "application/json"}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    data = body if isinstance(body, (str, bytes)) else json.dumps(body)
    return requests.post(catalog_uri(server) + path, data=data, headers=headers)


def sign_body(server, method: str, url: str) -> dict:
    return {"region": REGION, "uri": url, "method": method, "headers": {"Content-Type": ["text/plain"]}}


def object_url(server, table, key: str) -> str:
    bucket = table.location().removeprefix("s3://").split("/")[0]
    return f"{server.s3_url}/{bucket}/{key}"


@pytest.fixture
def signing_catalog(server, bucket, monkeypatch):
    # PyIceberg 0.12 builds its s3fs filesystem once per thread, and fsspec hands every thread the same cached
    # instance; each build unregisters and re-registers the signer hook on it, so a request of another thread
    # in that window goes out unsigned (an anonymous 403). One scan worker (PyIceberg's `max-workers`) keeps
    # every data request on one thread; docs/clients/pyiceberg.md says so.
    from pyiceberg.utils.concurrent import ExecutorFactory
    monkeypatch.setenv("PYICEBERG_MAX_WORKERS", "1")
    monkeypatch.setattr(ExecutorFactory, "_instance", None)
    monkeypatch.setattr(ExecutorFactory, "_instance_pid", None)
    return oauth_rest_catalog(server, bucket.arn, name="tablebay-remote-signing", **REMOTE_SIGNING)


def test_load_table_answers_the_signer_config(server, signing_catalog):
    ns = unique("rs", "_")
    signing_catalog.create_namespace(ns)
    created = signing_catalog.create_table((ns, "t"), SCHEMA)
    loaded = signing_catalog.load_table((ns, "t"))
    for table in (created, loaded):
        props = table.io.properties
        assert props["s3.remote-signing-enabled"] == "true"
        assert props["s3.signer"] == "S3V4RestSigner"
        assert props["s3.signer.endpoint"] == "v1/aws/s3/sign"
        assert "s3.session-token" not in props


def test_append_and_read_with_wrong_s3_keys(server, signing_catalog):
    ns = unique("rs", "_")
    signing_catalog.create_namespace(ns)
    table = signing_catalog.create_table((ns, "events"), SCHEMA)
    table.append(rows(range(0, 10)))
    table.append(rows(range(10, 15)))
    again = signing_catalog.load_table((ns, "events"))
    got = sorted(again.scan().to_arrow().to_pylist(), key=lambda r: r["id"])
    assert got == [{"id": i, "note": f"row-{i}"} for i in range(15)]
    assert len(again.metadata.snapshots) == 2
    # The wrong keys really are wrong: the data plane refuses them outright.
    import boto3
    from botocore.config import Config
    s3 = boto3.client("s3", endpoint_url=server.s3_url, region_name=REGION,
                      aws_access_key_id=REMOTE_SIGNING["s3.access-key-id"],
                      aws_secret_access_key=REMOTE_SIGNING["s3.secret-access-key"],
                      config=Config(s3={"addressing_style": "path"}, retries={"max_attempts": 1}))
    bucket_name = again.location().removeprefix("s3://").split("/")[0]
    with pytest.raises(Exception) as refused:
        s3.list_objects_v2(Bucket=bucket_name)
    assert "InvalidAccessKeyId" in str(refused.value) or "403" in str(refused.value)


def test_the_spec_endpoint_signs_for_its_own_table_only(server, signing_catalog, bucket):
    ns = unique("rs", "_")
    signing_catalog.create_namespace(ns)
    a = signing_catalog.create_table((ns, "a"), SCHEMA)
    b = signing_catalog.create_table((ns, "b"), SCHEMA)
    a.append(rows(range(3)))
    token = bearer(server, ACCESS_KEY_ID, SECRET_ACCESS_KEY)
    prefix = catalog_prefix(server, bucket.arn)
    key = a.metadata_location.split("--table-s3/", 1)[1]
    good = sign(server, token, sign_body(server, "GET", object_url(server, a, key)),
                f"/v1/{prefix}/namespaces/{ns}/tables/a/sign")
    assert good.status_code == 200, good.text
    assert good.headers["Cache-Control"] == "no-cache"
    signed = good.json()
    assert set(signed["headers"]) == {"authorization", "x-amz-date", "x-amz-security-token",
                                      "x-amz-content-sha256"}
    assert signed["headers"]["x-amz-content-sha256"] == ["UNSIGNED-PAYLOAD"]
    # The signature works on the data plane, with exactly the headers the client listed plus the answer's.
    headers = {"Content-Type": "text/plain", **{k: v[0] for k, v in signed["headers"].items()}}
    got = requests.get(signed["uri"], headers=headers)
    assert got.status_code == 200, got.text
    assert json.loads(got.content)["location"] == a.location()
    # Table b's file on table a's endpoint: 403.
    other = sign(server, token, sign_body(server, "GET", object_url(server, b, key)),
                 f"/v1/{prefix}/namespaces/{ns}/tables/a/sign")
    assert_error_model(other, 403, "ForbiddenException")


def test_refusals(server, signing_catalog, bucket):
    ns = unique("rs", "_")
    signing_catalog.create_namespace(ns)
    mine = signing_catalog.create_table((ns, "mine"), SCHEMA)
    theirs = signing_catalog.create_table((ns, "theirs"), SCHEMA)
    mine_arn = f"{bucket.arn}/table/{mine.metadata.table_uuid}"
    # A read-only user of table `mine`.
    user = unique("reader")
    admin(server, "POST", "/users", {"userName": user})
    key = admin(server, "POST", f"/users/{user}/access-keys")
    admin(server, "PUT", f"/users/{user}/policies/read", {
        "Version": "2012-10-17",
        "Statement": [{"Effect": "Allow", "Action": ["oss:GetTableData", "s3tables:GetTableData"],
                       "Resource": [mine_arn]}],
    })
    token = bearer(server, key["accessKeyId"], key["secretAccessKey"])
    url = object_url(server, mine, "data/x.parquet")

    assert sign(server, token, sign_body(server, "GET", url)).status_code == 200
    assert_error_model(sign(server, token, sign_body(server, "PUT", url)), 403, "ForbiddenException")
    assert_error_model(sign(server, token, sign_body(server, "DELETE", url)), 403)
    # Another table's file.
    assert_error_model(sign(server, token, sign_body(server, "GET", object_url(server, theirs, "data/x.parquet"))),
                       403, "ForbiddenException")
    # Another host, another port, a bucket that is no table's storage, a dot segment, an unsupported method.
    path = url.removeprefix(server.s3_url)
    for bad in (f"http://example.com{path}", f"{server.tables_url}{path}", f"{server.s3_url}/some-bucket/k",
                url.replace("/data/", "/../other--table-s3/")):
        assert_error_model(sign(server, token, sign_body(server, "GET", bad)), 403, "ForbiddenException")
    assert_error_model(sign(server, token, sign_body(server, "PATCH", url)), 403)
    # Malformed bodies: 400.
    for body in ("{", "[]", {"uri": url}, {"region": REGION, "uri": 5, "method": "GET", "headers": {}},
                 {"region": REGION, "uri": "not a url", "method": "GET", "headers": {}}):
        assert_error_model(sign(server, token, body), 400)
    # A bearer token that is not one: 401 NotAuthorizedException (OAuth2 clients then fetch a new token). No
    # credentials at all: 403, as on every route of the catalog (AWS's answer to an unsigned request).
    assert_error_model(sign(server, "not-a-token", sign_body(server, "GET", url)), 401, "NotAuthorizedException")
    assert_error_model(sign(server, None, sign_body(server, "GET", url)), 403)
    # A SigV4-signed sign request (Iceberg Java's signer uses the catalog's auth) is accepted too.
    signed = iceberg_request(server, "POST", "/v1/aws/s3/sign", sign_body(server, "HEAD", url))
    assert signed.status_code == 200, signed.text
