"""Iceberg REST clients for a test server: PyIceberg `RestCatalog`s, DuckDB connections with the iceberg
extension loaded from its PyPI package, a boto3 S3 client for the data plane, and raw signed requests to
`<tables url>/iceberg`.

The exact client configurations here are the ones docs/clients/pyiceberg.md and docs/clients/duckdb.md
show. Nothing here reads the user's ~/.pyiceberg.yaml, ~/.aws or ~/.duckdb: every setting is explicit.

Data files need the S3 data plane. Until it is merged into a build, the S3 listener answers every request
with S3's `NotImplemented` (501); `data_plane_missing()` detects exactly that answer, so tests that write
data skip with that reason and fail on any other error.
"""

from __future__ import annotations

import importlib
import json
import os
import tempfile
from pathlib import Path
from urllib.parse import quote

import boto3
from botocore.config import Config
from botocore.exceptions import ClientError

from . import ACCESS_KEY_ID, REGION, SECRET_ACCESS_KEY
from .signing import signed_request

# PyIceberg reads ~/.pyiceberg.yaml (or $PYICEBERG_HOME/.pyiceberg.yaml) and PYICEBERG_* variables;
# a developer's settings must not change what the suite sends.
for _key in [k for k in os.environ if k.startswith("PYICEBERG_")]:
    del os.environ[_key]
os.environ["PYICEBERG_HOME"] = tempfile.mkdtemp(prefix="tablebay-pyiceberg-home-")

from pyiceberg.catalog.rest import RestCatalog  # noqa: E402  (after the isolation above)

ICEBERG_PATH = "/iceberg"
PENDING_DATA_PLANE = ("the S3 data plane is not in this build yet (pending the lead's merge of the "
                      "data-plane branch): the S3 listener answers 501 NotImplemented")


def catalog_uri(server) -> str:
    """The catalog `uri` clients are given: `<tables url>/iceberg`."""
    return server.tables_url + ICEBERG_PATH


def pyiceberg_properties(server, warehouse: str, signing_name: str = "osstables", **extra: str) -> dict[str, str]:
    """RestCatalog properties with SigV4, exactly as docs/clients/pyiceberg.md shows them.

    `s3.endpoint`, `s3.path-style-access` and `client.region` come from the server's `/v1/config`; the
    data-file credentials are the catalog credentials (`client.*` apply to S3 too).
    """
    props = {
        "uri": catalog_uri(server),
        "warehouse": warehouse,
        "rest.sigv4-enabled": "true",
        "rest.signing-name": signing_name,
        "rest.signing-region": REGION,
        "client.access-key-id": ACCESS_KEY_ID,
        "client.secret-access-key": SECRET_ACCESS_KEY,
        "client.region": REGION,
        "py-io-impl": "pyiceberg.io.pyarrow.PyArrowFileIO",
    }
    props.update(extra)
    return props


def rest_catalog(server, warehouse: str, signing_name: str = "osstables", name: str = "tablebay",
                 **extra: str) -> RestCatalog:
    """A PyIceberg RestCatalog on the server's Iceberg endpoint, SigV4-signed as `signing_name`."""
    return RestCatalog(name, **pyiceberg_properties(server, warehouse, signing_name, **extra))


def oauth_rest_catalog(server, warehouse: str, name: str = "tablebay-oauth", **extra: str) -> RestCatalog:
    """A PyIceberg RestCatalog without SigV4: OAuth2 client credentials (`credential=<key id>:<secret>`)
    exchanged at `<uri>/v1/oauth/tokens` for a bearer token."""
    uri = catalog_uri(server)
    props = {
        "uri": uri,
        "warehouse": warehouse,
        "credential": f"{ACCESS_KEY_ID}:{SECRET_ACCESS_KEY}",
        "oauth2-server-uri": f"{uri}/v1/oauth/tokens",
        "client.access-key-id": ACCESS_KEY_ID,
        "client.secret-access-key": SECRET_ACCESS_KEY,
        "client.region": REGION,
        "py-io-impl": "pyiceberg.io.pyarrow.PyArrowFileIO",
    }
    props.update(extra)
    return RestCatalog(name, **props)


def iceberg_request(server, method: str, path: str, body=None, *, service: str = "osstables", **kw):
    """A signed raw request to `<tables url>/iceberg<path>` (path as it goes on the wire)."""
    return signed_request(server.tables_url, method, ICEBERG_PATH + path, body, service=service, **kw)


def config_response(server, warehouse: str, service: str = "osstables") -> dict:
    resp = iceberg_request(server, "GET", f"/v1/config?warehouse={quote(warehouse, safe='')}", service=service)
    assert resp.status_code == 200, f"{resp.status_code} {resp.text[:500]}"
    return resp.json()


def catalog_prefix(server, warehouse: str) -> str:
    """The `prefix` the server hands out for a warehouse (overrides win over defaults)."""
    cfg = config_response(server, warehouse)
    prefix = {**cfg.get("defaults", {}), **cfg.get("overrides", {})}.get("prefix")
    assert prefix, f"no prefix in {cfg}"
    return prefix


def assert_error_model(resp, status: int, error_type: str | None = None) -> dict:
    """The Iceberg `ErrorModel`: `{"error": {"message", "type", "code"}}` with `code` == the HTTP status."""
    assert resp.status_code == status, f"{resp.status_code} {resp.text[:500]}"
    body = resp.json()
    err = body.get("error")
    assert isinstance(err, dict), body
    assert err.get("code") == status, body
    assert isinstance(err.get("message"), str) and err["message"], body
    assert isinstance(err.get("type"), str) and err["type"], body
    if error_type is not None:
        assert err["type"] == error_type, body
    return err


# --- the S3 data plane ---------------------------------------------------------------------------------

def s3_client(server):
    """boto3 S3 client for the data plane: path-style, explicit credentials, no retries."""
    session = boto3.session.Session(aws_access_key_id=ACCESS_KEY_ID, aws_secret_access_key=SECRET_ACCESS_KEY,
                                    region_name=REGION)
    cfg = Config(s3={"addressing_style": "path"}, retries={"max_attempts": 1, "mode": "standard"},
                 connect_timeout=10, read_timeout=60)
    return session.client("s3", endpoint_url=server.s3_url, config=cfg)


def data_plane_missing(server) -> str | None:
    """`PENDING_DATA_PLANE` if the S3 listener is the interim 501 `NotImplemented` placeholder, else None."""
    try:
        s3_client(server).list_buckets()
    except ClientError as e:
        code = e.response.get("Error", {}).get("Code")
        if e.response["ResponseMetadata"]["HTTPStatusCode"] == 501 and code == "NotImplemented":
            return PENDING_DATA_PLANE
    return None


def split_s3_location(location: str) -> tuple[str, str]:
    """`s3://bucket/some/key` → (`bucket`, `some/key`)."""
    assert location.startswith("s3://"), location
    bucket, _, key = location[len("s3://"):].partition("/")
    return bucket, key


def list_keys(server, location: str) -> list[str]:
    """Every object key under an `s3://` location, through the S3 endpoint; none once the table's storage is
    gone altogether (a purged table's bucket no longer exists: NoSuchBucket)."""
    bucket, prefix = split_s3_location(location)
    client = s3_client(server)
    keys: list[str] = []
    try:
        for page in client.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix):
            keys += [o["Key"] for o in page.get("Contents", [])]
    except client.exceptions.NoSuchBucket:
        return []
    return keys


# --- DuckDB ----------------------------------------------------------------------------------------------

DUCKDB_EXTENSIONS = ("parquet", "httpfs", "avro", "iceberg")


def duckdb_extension_file(name: str) -> Path:
    """The `.duckdb_extension` file that the `duckdb-extension-<name>` PyPI package ships."""
    module = importlib.import_module(f"duckdb_extension_{name}")
    import duckdb

    version = duckdb.__version__
    path = Path(module.__file__).parent / "extensions" / f"v{version}" / f"{name}.duckdb_extension"
    assert path.is_file(), f"{path} missing: duckdb-extension-{name} must match duckdb {version}"
    return path


def duckdb_connect(extension_dir: Path):
    """A DuckDB connection that never downloads: autoinstall/autoload off, an empty extension directory,
    and each extension LOADed from the file its PyPI package ships (parquet is built into the wheel)."""
    import duckdb

    con = duckdb.connect(config={
        "autoinstall_known_extensions": "false",
        "autoload_known_extensions": "false",
        "extension_directory": str(extension_dir),
    })
    loaded = {row[0] for row in con.execute(
        "SELECT extension_name FROM duckdb_extensions() WHERE loaded").fetchall()}
    for name in DUCKDB_EXTENSIONS:
        if name not in loaded:
            con.execute(f"LOAD '{duckdb_extension_file(name)}'")
    return con


def duckdb_attach(con, server, warehouse: str, alias: str = "cat", service: str = "osstables") -> None:
    """The S3 secret and the ATTACH of docs/clients/duckdb.md, with DuckDB's default attach options."""
    s3_endpoint = server.s3_url.removeprefix("http://")
    con.execute(f"""
        CREATE OR REPLACE SECRET tablebay_s3 (
            TYPE s3,
            KEY_ID '{ACCESS_KEY_ID}',
            SECRET '{SECRET_ACCESS_KEY}',
            REGION '{REGION}',
            ENDPOINT '{s3_endpoint}',
            URL_STYLE 'path',
            USE_SSL false
        )""")
    con.execute(f"""
        ATTACH '{warehouse}' AS {alias} (
            TYPE iceberg,
            ENDPOINT '{catalog_uri(server)}',
            AUTHORIZATION_TYPE 'sigv4',
            SIGV4_SERVICE '{service}',
            SIGV4_REGION '{REGION}',
            SECRET tablebay_s3
        )""")


def pretty(obj) -> str:
    return json.dumps(obj, indent=1, sort_keys=True, default=str)[:2000]
