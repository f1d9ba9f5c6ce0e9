"""Tablebay through Alibaba's OSS Go SDK v2 (`github.com/aliyun/alibabacloud-oss-go-sdk-v2`, pinned in
clients/go-tables/go.mod), the SDK ossutil 2.x is built on (issue 16).

`clients/go-tables` is a small Go program that runs the product guide's `ossutil tables-api` steps through the
SDK's Tables client (`oss/tables`: OSS V4 signatures, product `osstables`) — create-table-bucket, the bucket's
file-removal settings, create-namespace, create-table with the guide's schema.json, the table's compaction
settings — then reads everything back (GetTable by name and by ARN, ListTables, both maintenance configurations,
the job status), optionally deletes it all, and prints a JSON summary with every request it sent. It checks the
answers itself (exit 1 on any difference); this module builds it with `go build`, runs it against the suite's
OSS-flavor server in each addressing style, and checks the summary and the server's state through boto3.

Addressing: `ip` (http://127.0.0.1:port: the SDK forces path style for an IP endpoint), `path`
(http://tables.localhost:port with -path-style) and `virtual` (the SDK's default: `<bucket>-<account>.tables.localhost`,
bucket ARN still in the path). The program's `-dial 127.0.0.1` connects every request to the loopback address at
the URL's port, so no name has to resolve.

Go: `go` on PATH, else /usr/local/go/bin/go; modules and build cache under $HOME/.cache/tablebay-go unless GOPATH /
GOMODCACHE are set; the module proxy is whatever the environment says. Skipped only when there is no `go`.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from tablebay_test import ACCESS_KEY_ID, ACCOUNT_ID, REGION, SECRET_ACCESS_KEY
from tablebay_test.clients import make_client
from tablebay_test.expect import (
    FORBIDDEN_CODES, WAREHOUSE_RE, bucket_arn, metadata_location_re, purge_bucket, table_arn_re, unique,
)

PROGRAM = Path(__file__).resolve().parent.parent / "go-tables"
SDK_MODULE = "github.com/aliyun/alibabacloud-oss-go-sdk-v2"
ENDPOINT_HOST = "tables.localhost"
GO_CACHE = Path.home() / ".cache" / "tablebay-go"

# What the program does, in order; with -cleanup the last four follow.
GUIDE_STEPS = [
    "CreateTableBucket", "GetTableBucket", "PutTableBucketMaintenanceConfiguration", "CreateNamespace",
    "CreateTable", "PutTableMaintenanceConfiguration", "GetTable", "GetTableByARN", "ListTables",
    "GetTableBucketMaintenanceConfiguration", "GetTableMaintenanceConfiguration", "GetTableMaintenanceJobStatus",
]
CLEANUP_STEPS = ["DeleteTable", "DeleteNamespace", "DeleteTableBucket", "GetTableBucketAfterDelete"]

# The guide's maintenance settings, as the program puts them.
FILE_REMOVAL = {"status": "enabled",
                "settings": {"icebergUnreferencedFileRemoval": {"unreferencedDays": 4, "nonCurrentDays": 10}}}
TARGET_FILE_SIZE_MB = 256


def go_executable() -> str | None:
    found = shutil.which("go")
    if found:
        return found
    fallback = Path("/usr/local/go/bin/go")
    return str(fallback) if fallback.is_file() and os.access(fallback, os.X_OK) else None


GO = go_executable()
pytestmark = [
    pytest.mark.skipif(GO is None, reason="`go` is not installed (not on PATH, no /usr/local/go/bin/go): the Go "
                                          "SDK check needs the Go toolchain to build clients/go-tables"),
    # The first build may download the SDK module and compile the SDK.
    pytest.mark.timeout(600),
]


def pinned_sdk_version() -> str:
    """The SDK version clients/go-tables/go.mod requires (`v1.6.1` → `1.6.1`)."""
    m = re.search(rf"^\s*(?:require\s+)?{re.escape(SDK_MODULE)}\s+v(\S+)", (PROGRAM / "go.mod").read_text(), re.M)
    assert m, f"{SDK_MODULE} is not required in {PROGRAM / 'go.mod'}"
    return m.group(1)


def go_environment() -> dict[str, str]:
    env = dict(os.environ)
    env.setdefault("GOPATH", str(GO_CACHE))
    env.setdefault("GOMODCACHE", str(GO_CACHE / "mod"))
    return env


@pytest.fixture(scope="module")
def go_tables(tmp_path_factory) -> Path:
    """clients/go-tables built from this tree (go.sum checked; modules from the cache or the environment's proxy)."""
    binary = tmp_path_factory.mktemp("go-tables") / "go-tables"
    proc = subprocess.run([GO, "build", "-buildvcs=false", "-o", str(binary), "."], cwd=PROGRAM, env=go_environment(),
                          stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=540)
    assert proc.returncode == 0, f"go build in {PROGRAM} failed:\n{proc.stdout}\n{proc.stderr}"
    return binary


@pytest.fixture(scope="module")
def boto(oss_server):
    """boto3 `s3tables` on the same server: an independent view of what the Go SDK did, and clean-up."""
    return make_client(oss_server.tables_url)


def endpoint(server, style: str) -> str:
    port = urlsplit(server.tables_url).port
    return f"http://{'127.0.0.1' if style == 'ip' else ENDPOINT_HOST}:{port}"


def run_go_tables(binary: Path, server, style: str, *args: str, region: str = REGION,
                  access_key: str = ACCESS_KEY_ID, secret: str = SECRET_ACCESS_KEY) -> tuple[int, dict, str]:
    """Runs the program against `server` in `style`; (exit code, summary, stderr)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OSS_", "TABLES_"))}
    env.update(OSS_ACCESS_KEY_ID=access_key, OSS_ACCESS_KEY_SECRET=secret)
    cmd = [str(binary), "-endpoint", endpoint(server, style), "-region", region, "-account-id", server.account_id,
           "-dial", "127.0.0.1", *(["-path-style"] if style == "path" else []), *args]
    proc = subprocess.run(cmd, env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=180)
    try:
        summary = json.loads(proc.stdout)
    except json.JSONDecodeError:
        pytest.fail(f"{cmd} printed no JSON summary (exit {proc.returncode}):\n{proc.stdout}\n{proc.stderr}\n"
                    f"{server.log_tail()}")
    return proc.returncode, summary, proc.stderr


def names() -> tuple[str, str, str]:
    return unique("go"), unique("ns", "_"), unique("tbl", "_")


def assert_oss4_signed(summary: dict, access_key: str = ACCESS_KEY_ID, region: str = REGION) -> None:
    """Every request carried the Go SDK's OSS V4 header signature, scoped to `region` and `osstables`."""
    scope = re.compile(rf"^OSS4-HMAC-SHA256 Credential={re.escape(access_key)}/\d{{8}}/{re.escape(region)}/"
                       rf"osstables/aliyun_v4_request,(AdditionalHeaders=[a-z0-9;-]+,)?Signature=[0-9a-f]{{64}}$")
    for req in summary["requests"]:
        assert scope.match(req["authorization"]), req


def assert_hosts(summary: dict, server, style: str, bucket: str) -> None:
    """Path styles send every request to the endpoint host; virtual-hosted sends all but CreateTableBucket (which
    names no bucket) to `<bucket>-<account>.<endpoint host>`."""
    endpoint_host = urlsplit(endpoint(server, style)).netloc
    hosts = [r["host"] for r in summary["requests"]]
    if style == "virtual":
        assert summary["addressing"] == "virtual-hosted"
        assert hosts[0] == endpoint_host, summary["requests"][0]
        assert set(hosts[1:]) == {f"{bucket}-{server.account_id}.{endpoint_host}"}, hosts
    else:
        assert summary["addressing"] == "path"
        assert set(hosts) == {endpoint_host}, hosts


@pytest.mark.parametrize("style", ["ip", "path", "virtual"])
def test_guide_commands(go_tables, oss_server, boto, style):
    """The guide's create-table-bucket / create-namespace / create-table (+ its maintenance settings) through the
    Go SDK; what the SDK read back is what was asked for, and boto3 sees the same table."""
    bucket, ns, table = names()
    code, summary, stderr = run_go_tables(go_tables, oss_server, style, "-bucket", bucket, "-namespace", ns,
                                          "-table", table)
    arn = bucket_arn(bucket, "oss")
    try:
        assert code == 0 and summary["ok"], f"{json.dumps(summary, indent=1)}\n{stderr}\n{oss_server.log_tail()}"
        assert summary["sdkVersion"] == pinned_sdk_version()
        assert summary["steps"] == GUIDE_STEPS
        assert summary["tableBucketARN"] == arn and summary["namespace"] == ns
        got = summary["table"]
        assert got["name"] == table and got["namespace"] == [ns] and got["format"] == "ICEBERG"
        assert table_arn_re(arn).match(got["tableARN"]), got
        assert got["ownerAccountId"] == ACCOUNT_ID
        assert WAREHOUSE_RE.match(got["warehouseLocation"]), got
        # A table created with a schema has its first metadata file.
        assert metadata_location_re(got["warehouseLocation"]).match(got["metadataLocation"]), got
        assert summary["listTables"] == [table]
        assert summary["bucketMaintenance"] == {"icebergUnreferencedFileRemoval": FILE_REMOVAL}
        compaction = summary["tableMaintenance"]["icebergCompaction"]
        assert compaction["status"] == "enabled"
        assert compaction["settings"]["icebergCompaction"]["targetFileSizeMB"] == TARGET_FILE_SIZE_MB
        assert set(summary["jobStatus"]) >= {"icebergCompaction", "icebergSnapshotManagement",
                                             "icebergUnreferencedFileRemoval"}
        assert summary["deleted"] is False
        assert_hosts(summary, oss_server, style, bucket)
        assert_oss4_signed(summary)
        assert all(r["status"] in (200, 204) for r in summary["requests"]), summary["requests"]

        # The same table through another client.
        seen = boto.get_table(tableBucketARN=arn, namespace=ns, name=table)
        assert (seen["tableARN"], seen["versionToken"], seen["metadataLocation"]) == \
            (got["tableARN"], got["versionToken"], got["metadataLocation"])
        assert boto.get_table_maintenance_configuration(tableBucketARN=arn, namespace=ns, name=table)[
            "configuration"]["icebergCompaction"]["settings"]["icebergCompaction"]["targetFileSizeMB"] == \
            TARGET_FILE_SIZE_MB
    finally:
        purge_bucket(boto, arn)


@pytest.mark.parametrize("style", ["ip", "virtual"])
def test_delete_everything(go_tables, oss_server, boto, style):
    """DeleteTable, DeleteNamespace, DeleteTableBucket through the SDK; then GetTableBucket is a 404 that the Go SDK
    reads as a service error with the OSS error contract (code, message, request id)."""
    bucket, ns, table = names()
    code, summary, stderr = run_go_tables(go_tables, oss_server, style, "-bucket", bucket, "-namespace", ns,
                                          "-table", table, "-cleanup")
    assert code == 0 and summary["ok"], f"{json.dumps(summary, indent=1)}\n{stderr}\n{oss_server.log_tail()}"
    assert summary["steps"] == GUIDE_STEPS + CLEANUP_STEPS
    assert summary["deleted"] is True
    gone = summary["afterDelete"]
    assert gone["status"] == 404 and gone["errorTypeHeader"] == "NotFoundException", gone
    # The Go SDK takes the code from the body (it ignores x-oss-error-type): the server must put it there.
    assert gone["code"] == "NotFoundException", gone
    assert gone["message"] and gone["requestId"], gone
    assert_hosts(summary, oss_server, style, bucket)
    assert boto.list_table_buckets(prefix=bucket)["tableBuckets"] == []


def test_additional_headers_are_signed(go_tables, oss_server, boto):
    """The Go SDK (unlike the Python one) passes Config.AdditionalHeaders to its signer, as ossutil can: with
    `user-agent` signed too, every request still verifies."""
    bucket, ns, table = names()
    try:
        code, summary, stderr = run_go_tables(go_tables, oss_server, "virtual", "-bucket", bucket, "-namespace", ns,
                                              "-table", table, "-additional-headers", "user-agent")
        assert code == 0 and summary["ok"], f"{json.dumps(summary, indent=1)}\n{stderr}\n{oss_server.log_tail()}"
        assert summary["steps"] == GUIDE_STEPS
        assert_oss4_signed(summary)
        assert all(",AdditionalHeaders=user-agent," in r["authorization"] for r in summary["requests"]), \
            summary["requests"]
    finally:
        purge_bucket(boto, bucket_arn(bucket, "oss"))


@pytest.mark.parametrize("case", ["wrong secret", "unknown key", "other region"])
def test_refused_signatures_create_nothing(go_tables, oss_server, boto, case):
    """A wrong secret, an unknown key or a signature scoped to another region than the server's: CreateTableBucket
    is a 403 the Go SDK reports as a service error, the program exits 1, and no bucket exists."""
    bucket, ns, table = names()
    kw = {"wrong secret": {"secret": SECRET_ACCESS_KEY + "x"},
          "unknown key": {"access_key": "TBNOSUCHACCESSKEY01"},
          "other region": {"region": "cn-hangzhou"}}[case]
    code, summary, _ = run_go_tables(go_tables, oss_server, "virtual", "-bucket", bucket, "-namespace", ns,
                                     "-table", table, **kw)
    assert code == 1 and summary["ok"] is False, summary
    assert summary["steps"] == [] and len(summary["requests"]) == 1, summary
    err = summary["error"]
    assert err["step"] == "CreateTableBucket", err
    service = err["service"]
    assert service["status"] == 403 and service["errorTypeHeader"] in FORBIDDEN_CODES, err
    assert service["code"] == service["errorTypeHeader"], err
    assert service["requestId"], err
    if case == "other region":
        assert "cn-hangzhou" in service["message"] and REGION in service["message"], err
    assert boto.list_table_buckets(prefix=bucket)["tableBuckets"] == []
