"""Fixtures of the real-client suite.

Each test module gets its own `tablebay serve` (module scope), started from `TABLEBAY_BIN` (else
`$CARGO_TARGET_DIR/debug/tablebay`, built if stale; tablebay_test/binary.py refuses a binary built from other
sources unless `TABLEBAY_BIN_UNCHECKED=1`) with a temporary data dir, ephemeral ports, `--arn-flavor aws`,
region us-east-1, account 111122223333 and fixed root credentials. `oss_server` is a second one with
the default (oss) ARN flavor. Clients are boto3 (`s3tables`), the `aws` CLI (`cli`) and raw
SigV4-signed requests (`raw`).
"""

from __future__ import annotations

import functools
import os
import tempfile
from pathlib import Path
from types import SimpleNamespace

import pytest

from tablebay_test.cli import AwsCli
from tablebay_test.cluster import Cluster
from tablebay_test.clients import make_client
from tablebay_test.expect import bucket_arn, purge_bucket, unique
from tablebay_test.iceberg import data_plane_missing, rest_catalog
from tablebay_test.server import TablebayServer
from tablebay_test.signing import signed_request
from tablebay_test import ACCESS_KEY_ID, REGION, SECRET_ACCESS_KEY
from tablebay_test.s3 import S3Env, create_table, create_table_home, use_pure_python_signers
from tablebay_test.s3raw import RawS3


def _isolate_from_user_aws_config() -> None:
    """boto3 in this process must not read ~/.aws or inherit AWS_* settings (profile, endpoint, keys)."""
    for key in list(os.environ):
        if key.startswith("AWS_"):
            del os.environ[key]
    empty = Path(tempfile.mkdtemp(prefix="tablebay-aws-"))
    for name in ("config", "credentials"):
        (empty / name).write_text("")
    os.environ["AWS_CONFIG_FILE"] = str(empty / "config")
    os.environ["AWS_SHARED_CREDENTIALS_FILE"] = str(empty / "credentials")
    os.environ["AWS_EC2_METADATA_DISABLED"] = "true"


_isolate_from_user_aws_config()
# awscrt (installed for CRC32C/CRC64NVME) would switch every boto3 client to the CRT signer; the suite signs
# as plain boto3 does and uses tablebay_test.s3.crt_signers() where it means to.
use_pure_python_signers()


def _start(tmp_path_factory, label: str, arn_flavor):
    server = TablebayServer(tmp_path_factory.mktemp(label), arn_flavor=arn_flavor)
    server.start()
    return server


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """A fresh server per test module, ARNs in the `arn:aws:s3tables:…` form."""
    srv = _start(tmp_path_factory, "tablebay-aws", "aws")
    yield srv
    srv.stop()


@pytest.fixture(scope="module")
def oss_server(tmp_path_factory):
    """A fresh server with the default ARN flavor (`acs:osstables:…`)."""
    srv = _start(tmp_path_factory, "tablebay-oss", None)
    yield srv
    srv.stop()


@pytest.fixture(scope="module")
def s3tables(server):
    """boto3 `s3tables` client pointed at the module's server (no retries)."""
    return make_client(server.tables_url)


@pytest.fixture(scope="module")
def client_factory(server):
    """`client_factory(access_key=…, secret_key=…)`: another boto3 client for the module's server."""
    return functools.partial(make_client, server.tables_url)


@pytest.fixture(scope="module")
def raw(server):
    """`raw(method, path, body=None, **kw)`: a SigV4-signed request to the tables listener."""
    return functools.partial(signed_request, server.tables_url)


@pytest.fixture(scope="module")
def cli(server, tmp_path_factory):
    """`cli(*args)` runs `aws s3tables …` against the module's server and returns its JSON output."""
    return AwsCli(server.tables_url, tmp_path_factory.mktemp("aws-home"))


@pytest.fixture
def bucket(s3tables):
    """A fresh, empty table bucket, emptied and deleted after the test."""
    name = unique("bkt")
    arn = s3tables.create_table_bucket(name=name)["arn"]
    assert arn == bucket_arn(name)
    yield SimpleNamespace(name=name, arn=arn)
    purge_bucket(s3tables, arn)


@pytest.fixture
def namespace(s3tables, bucket):
    """A namespace in a fresh bucket: `.bucket` (the bucket) and `.name`."""
    name = unique("ns", "_")
    s3tables.create_namespace(tableBucketARN=bucket.arn, namespace=[name])
    return SimpleNamespace(bucket=bucket, name=name)


@pytest.fixture
def table(s3tables, namespace):
    """A table without metadata: `.bucket_arn`, `.namespace`, `.name`, `.arn`, `.version_token`."""
    name = unique("tbl", "_")
    resp = s3tables.create_table(tableBucketARN=namespace.bucket.arn, namespace=namespace.name,
                                 name=name, format="ICEBERG")
    return SimpleNamespace(bucket_arn=namespace.bucket.arn, namespace=namespace.name, name=name,
                           arn=resp["tableARN"], version_token=resp["versionToken"])


# --- Iceberg REST clients ---

@pytest.fixture(scope="module")
def data_plane(server):
    """Skips the module's tests that use it when the server has no S3 data plane (with the reason); a module
    that needs it throughout says `pytestmark = pytest.mark.usefixtures("data_plane")`."""
    reason = data_plane_missing(server)
    if reason:
        pytest.skip(reason)


@pytest.fixture
def catalog(server, bucket):
    """A PyIceberg RestCatalog on a fresh table bucket, signed as `osstables`."""
    return rest_catalog(server, bucket.arn)


@pytest.fixture
def ns(catalog):
    """A fresh namespace in `catalog`."""
    name = unique("ns", "_")
    catalog.create_namespace(name)
    return name


# --- the S3 data plane ---

def _local_env(server, label: str = "local") -> S3Env:
    tables = make_client(server.tables_url)
    home = create_table_home(tables)
    return S3Env(backend=label, server=server, tables=tables, bucket_arn=home.bucket_arn,
                 namespace=home.namespace)


def start_remote_backed(tmp_path_factory) -> tuple[TablebayServer, TablebayServer, object]:
    """A Tablebay whose blob store is a table's storage bucket on a SECOND Tablebay (`store`):
    `--blob-url s3://<uuid>--table-s3/blobs` with the store's S3 endpoint, keys, region and path style."""
    store = _start(tmp_path_factory, "tablebay-blobstore", "aws")
    try:
        store_tables = make_client(store.tables_url)
        home = create_table_home(store_tables)
        store_table = create_table(store_tables, home.bucket_arn, home.namespace, name="blobs")
        srv = TablebayServer(tmp_path_factory.mktemp("tablebay-remote"), arn_flavor="aws", extra_args=(
            "--blob-url", f"s3://{store_table.bucket}/blobs",
            "--blob-s3-endpoint", store.s3_url,
            "--blob-s3-access-key-id", ACCESS_KEY_ID,
            "--blob-s3-secret-access-key", SECRET_ACCESS_KEY,
            "--blob-s3-region", REGION,
            "--blob-s3-path-style", "true",
        ))
        srv.start()
    except BaseException:
        store.stop()
        raise
    return srv, store, store_table


@pytest.fixture(scope="module")
def s3env(server):
    """The data plane on the default (local directory) backend: `S3Env` (tables via `.new_table()`,
    boto3 clients via `.client(mode)`)."""
    return _local_env(server)


@pytest.fixture(scope="module", params=["local", "remote"])
def s3env_both(request, tmp_path_factory):
    """`S3Env` on each blob backend: `local` (a directory) and `remote` (`--blob-url s3://…` on a second
    Tablebay). Tests that take it run twice."""
    if request.param == "local":
        yield _local_env(request.getfixturevalue("server"))
        return
    srv, store, store_table = start_remote_backed(tmp_path_factory)
    try:
        env = _local_env(srv, "remote")
        env.store, env.store_table = store, store_table
        yield env
    finally:
        srv.stop()
        store.stop()


@pytest.fixture(scope="module")
def raw_s3(server):
    """`RawS3` for the module server's S3 listener: hand-signed requests (streaming forms, traversal)."""
    return RawS3(server.s3_url)


@pytest.fixture
def s3table(s3env):
    """A fresh table on the local backend; `.bucket` is its storage bucket."""
    return s3env.new_table()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """On a failure, attach the tail of the server's log to the test report."""
    outcome = yield
    report = outcome.get_result()
    if report.failed:
        funcargs = item.funcargs if hasattr(item, "funcargs") else {}
        for name in ("server", "oss_server"):
            srv = funcargs.get(name)
            if isinstance(srv, TablebayServer):
                report.sections.append((f"{name} log", srv.log_tail(40)))
        cluster = funcargs.get("cluster")
        if isinstance(cluster, Cluster):
            cluster.failed = True
            report.sections.extend(cluster.failure_report())
        for name in ("s3env", "s3env_both"):
            env = funcargs.get(name)
            if isinstance(env, S3Env) and env.backend == "remote":
                report.sections.append(("remote-backed server log", env.server.log_tail(40)))
                report.sections.append(("blob store server log", env.store.log_tail(20)))
