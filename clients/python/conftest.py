"""Fixtures of the real-client suite.

Each test module gets its own `tablebay serve` (module scope), started from `TABLEBAY_BIN` (else
`$CARGO_TARGET_DIR/debug/tablebay`) with a temporary data dir, ephemeral ports, `--arn-flavor aws`,
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
from tablebay_test.clients import make_client
from tablebay_test.expect import bucket_arn, purge_bucket, unique
from tablebay_test.server import TablebayServer
from tablebay_test.signing import signed_request


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


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """On a failure, attach the tail of the server's log to the test report."""
    outcome = yield
    report = outcome.get_result()
    if report.failed:
        for name in ("server", "oss_server"):
            srv = item.funcargs.get(name) if hasattr(item, "funcargs") else None
            if isinstance(srv, TablebayServer):
                report.sections.append((f"{name} log", srv.log_tail(40)))
