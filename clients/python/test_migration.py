"""Table migration (issue 21, docs/migration.md) against real sources.

The source catalog is Iceberg's own REST catalog server (`RESTCatalogServer` of Iceberg 1.10.1's test fixtures,
class path by scripts/rest-source.sh) with a local warehouse; PyIceberg writes a partitioned table into it with
three snapshots (two appends and a delete). Tablebay migrates it with `tablebay migration start` in both data
modes: time travel to every migrated snapshot gives the source's rows, client writes are refused until the
migration is completed, a sync brings two later source commits, and after CompleteTableMigration the table
takes an append and (copy mode) a compaction. Then a metadata-location migration from a table on SeaweedFS
(scripts/seaweedfs.sh; skipped with the reason when `weed` cannot be built here), and the bad inputs: an
unreachable source fails with a reason and leaves no table, an existing destination is 409, `glueTable` is 400,
and completing before success is the model's ConflictException.

Needs java (scripts/jvm-tools.sh): it runs in the `migration` stage of scripts/test.sh, not in python-clients.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import time
from pathlib import Path

import pyarrow as pa
import pytest
from botocore.exceptions import ClientError
from pyiceberg.catalog.rest import RestCatalog
from pyiceberg.exceptions import CommitFailedException
from pyiceberg.expressions import EqualTo
from pyiceberg.partitioning import PartitionField, PartitionSpec
from pyiceberg.schema import Schema
from pyiceberg.transforms import IdentityTransform
from pyiceberg.types import DoubleType, LongType, NestedField, StringType

from tablebay_test import ACCESS_KEY_ID, REGION, SECRET_ACCESS_KEY
from tablebay_test.binary import binary_path
from tablebay_test.clients import make_client
from tablebay_test.expect import unique
from tablebay_test.iceberg import rest_catalog
from tablebay_test.server import TablebayServer
from tablebay_test.signing import signed_request

REPO = Path(__file__).resolve().parents[2]
ROLE = "arn:aws:iam::111122223333:role/migration"
REPORTS = "arn:aws:s3:::migration-reports"
SCHEMA = Schema(
    NestedField(1, "id", LongType(), required=False),
    NestedField(2, "category", StringType(), required=False),
    NestedField(3, "value", DoubleType(), required=False),
)
SPEC = PartitionSpec(PartitionField(source_id=2, field_id=1000, transform=IdentityTransform(), name="category"))


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def batch(start: int, n: int) -> pa.Table:
    ids = list(range(start, start + n))
    return pa.table({
        "id": pa.array(ids, pa.int64()),
        "category": pa.array(["abc"[i % 3] for i in ids], pa.string()),
        "value": pa.array([i * 1.5 for i in ids], pa.float64()),
    })


def rows(table: pa.Table) -> list[tuple]:
    return sorted(zip(*(table.column(c).to_pylist() for c in ("id", "category", "value"))))


def wait_for(predicate, what: str, timeout: float = 60.0):
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.2)


@pytest.fixture(scope="module")
def warehouse(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("source-warehouse")


class RestSource:
    """Iceberg's RESTCatalogServer on a free port; `catalog_env` are its CATALOG_* settings."""

    def __init__(self, workdir: Path, catalog_env: dict[str, str]):
        if shutil.which("java") is None:
            pytest.fail("java is missing: run scripts/jvm-tools.sh (the migration stage of scripts/test.sh does)")
        classpath = subprocess.run([str(REPO / "scripts" / "rest-source.sh"), "classpath"], check=True,
                                   capture_output=True, text=True).stdout.strip().splitlines()[-1]
        port = free_port()
        env = {k: v for k, v in os.environ.items() if not k.startswith(("CATALOG_", "AWS_"))}
        env.update({**catalog_env, "CATALOG_REST_PORT": str(port)})
        self.log_path = workdir / "rest-source.log"
        self._log = open(self.log_path, "w")
        self.proc = subprocess.Popen(
            ["java", "-Xmx512m", "-cp", classpath, "org.apache.iceberg.rest.RESTCatalogServer"],
            env=env, stdout=self._log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        self.uri = f"http://127.0.0.1:{port}"

        def ready():
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=1):
                    return True
            except OSError:
                assert self.proc.poll() is None, f"RESTCatalogServer exited: {self.log_path.read_text()[-2000:]}"
                return False

        wait_for(ready, "RESTCatalogServer", 90)

    def stop(self) -> None:
        self.proc.terminate()
        self.proc.wait(timeout=20)
        self._log.close()


@pytest.fixture(scope="module")
def rest_source(warehouse, tmp_path_factory):
    """The source catalog with its warehouse in a local directory."""
    source = RestSource(tmp_path_factory.mktemp("rest-source"), {"CATALOG_WAREHOUSE": f"file://{warehouse}"})
    yield source.uri
    source.stop()


@pytest.fixture(scope="module")
def server(tmp_path_factory, warehouse):
    srv = TablebayServer(tmp_path_factory.mktemp("tablebay-migration"),
                         extra_args=("--migration-local-root", str(warehouse)))
    srv.start()
    yield srv
    srv.stop()


@pytest.fixture(scope="module")
def source_catalog(rest_source, warehouse):
    return RestCatalog("source", uri=rest_source, warehouse=f"file://{warehouse}")


@pytest.fixture(scope="module")
def destination(server):
    s3tables = make_client(server.tables_url)
    name = unique("dest")
    arn = s3tables.create_table_bucket(name=name)["arn"]
    s3tables.create_namespace(tableBucketARN=arn, namespace=["dst"])
    return arn


def tablebay_cli(server, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AWS_", "TABLEBAY_"))}
    env.update({"TABLEBAY_ENDPOINT": server.tables_url, "TABLEBAY_REGION": REGION,
                "AWS_ACCESS_KEY_ID": ACCESS_KEY_ID, "AWS_SECRET_ACCESS_KEY": SECRET_ACCESS_KEY})
    return subprocess.run([str(binary_path()), "migration", *args], env=env, input=stdin, capture_output=True,
                          text=True, timeout=60)


def start_request(source: dict, source_type: str, bucket_arn: str, name: str, mode: str, **more) -> dict:
    return {"roleARN": ROLE, "sourceType": source_type, "source": {source_type: source},
            "destinationTable": {"tableBucketARN": bucket_arn, "namespace": "dst", "name": name},
            "dataMigration": {"dataMode": mode},
            "migrationOutput": {"bucket": REPORTS, "prefixes": {"tableCompatibilityReport": "tc",
                                                                 "objectCompatibilityReport": "oc",
                                                                 "objectMigrationReport": "om"}},
            **more}


def start(server, request: dict) -> str:
    done = tablebay_cli(server, "start", "--request", json.dumps(request))
    assert done.returncode == 0, done.stderr
    answer = json.loads(done.stdout)
    assert answer["state"] == "planning", answer
    return answer["migrationId"]


def settle(s3tables, **selector) -> dict:
    """The migration once it rests (succeeded, failed, pendingReview, cancelled)."""
    def rested():
        got = s3tables.get_table_migration(**selector)
        return got if got["state"] in ("succeeded", "failed", "pendingReview", "cancelled") else None
    return wait_for(rested, f"migration {selector}", 120)


def rest_source_of(rest_uri: str, warehouse: Path, table: str) -> dict:
    return {"uri": rest_uri, "warehouse": f"file://{warehouse}", "namespace": ["src"], "name": table,
            "auth": {"type": "none"}}


@pytest.fixture(scope="module")
def source_table(source_catalog):
    """`src.events`: partitioned by category, snapshots: append, append, delete (copy-on-write)."""
    source_catalog.create_namespace_if_not_exists("src")
    table = source_catalog.create_table("src.events", SCHEMA, partition_spec=SPEC,
                                        properties={"format-version": "2"})
    table.append(batch(0, 30))
    table.append(batch(30, 30))
    table.delete(EqualTo("category", "b"))
    table = source_catalog.load_table("src.events")
    assert len(table.snapshots()) >= 3, table.snapshots()
    return table


def snapshot_rows(table) -> dict[int, list[tuple]]:
    return {s.snapshot_id: rows(table.scan(snapshot_id=s.snapshot_id).to_arrow()) for s in table.snapshots()}


@pytest.mark.parametrize("mode", ["copy", "register"])
def test_rest_catalog_migration_start_sync_complete(server, rest_source, warehouse, source_catalog, source_table,
                                                    destination, mode):
    s3tables = make_client(server.tables_url)
    name = f"events_{mode}"
    source = source_catalog.load_table("src.events")
    expected = snapshot_rows(source)
    migration = start(server, start_request(rest_source_of(rest_source, warehouse, "events"), "icebergRestTable",
                                            destination, name, mode))
    got = settle(s3tables, migrationId=migration)
    assert got["state"] == "succeeded", got
    assert got["type"] == "start" and got["hasValidPlan"] is True, got
    stats, planning = got["migrationStats"], got["planningStats"]
    assert planning["partitionCount"] == 3 and planning["objectsScanned"] > 0, planning
    assert stats["objectsMigrated"] == planning["objectsPlanned"] and stats["objectsFailedMigration"] == 0, got
    output = got["migrationOutput"]
    for report, prefix in (("tableCompatibilityReport", "tc"), ("objectCompatibilityReport", "oc"),
                           ("objectMigrationReport", "om")):
        assert output[report]["key"].startswith(f"migration-reports/{prefix}/{migration}/"), output
        assert len(output[report]["checksumCRC64NVME"]) == 12, output
    table_arn = got["tableARN"]
    assert s3tables.get_table(tableArn=table_arn)["name"] == name

    # Time travel to every migrated snapshot gives the source's rows.
    catalog = rest_catalog(server, destination)
    migrated = catalog.load_table(f"dst.{name}")
    assert snapshot_rows(migrated) == expected
    files = [task.file.file_path for task in migrated.scan().plan_files()]
    assert files
    if mode == "copy":
        assert all(f.startswith(migrated.location()) for f in files), files
    else:
        assert all(f.startswith("file:") and str(warehouse) in f for f in files), files

    # Until completed, clients cannot write it.
    with pytest.raises(CommitFailedException, match="read-only until the migration is completed"):
        migrated.append(batch(1000, 3))
    # Completing a run that has not succeeded is the model's ConflictException: a sync waiting for review.
    source.append(batch(60, 9))
    source.append(batch(69, 9))
    source = source_catalog.load_table("src.events")
    done = tablebay_cli(server, "sync", "--table-arn", table_arn, "--role-arn", ROLE, "--output-bucket", REPORTS,
                        "--review")
    assert done.returncode == 0, done.stderr
    sync_id = json.loads(done.stdout)["migrationId"]
    assert settle(s3tables, tableARN=table_arn)["state"] == "pendingReview"
    with pytest.raises(ClientError) as refused:
        s3tables.complete_table_migration(tableARN=table_arn)
    assert refused.value.response["Error"]["Code"] == "ConflictException"
    assert refused.value.response["ResponseMetadata"]["HTTPStatusCode"] == 409
    queued = s3tables.update_table_migration(migrationId=sync_id, requestedState="queued")
    assert queued["state"] in ("queued", "migrating", "succeeded"), queued
    synced = settle(s3tables, migrationId=sync_id)
    assert synced["state"] == "succeeded" and synced["type"] == "sync", synced

    # The sync brought the two later commits; every snapshot still reads as in the source.
    migrated = catalog.load_table(f"dst.{name}")
    assert snapshot_rows(migrated) == snapshot_rows(source)
    assert len(migrated.snapshots()) == len(source.snapshots())
    listed = s3tables.list_table_migrations(tableARN=table_arn)["migrations"]
    assert [m["type"] for m in listed] == ["start", "sync"], listed

    # Complete: an ordinary table that takes writes (and maintenance).
    s3tables.complete_table_migration(tableARN=table_arn)
    migrated.append(batch(2000, 5))
    after = rows(catalog.load_table(f"dst.{name}").scan().to_arrow())
    assert after == sorted(rows(source.scan().to_arrow()) + rows(batch(2000, 5)))
    with pytest.raises(ClientError) as refused:
        s3tables.sync_table_migration(tableARN=table_arn, roleARN=ROLE, migrationOutput={"bucket": REPORTS})
    assert refused.value.response["Error"]["Code"] == "ConflictException"
    if mode == "copy":
        # Compaction reads the table's own storage: a register-mode table's files stay on the source's store.
        run = signed_request(server.tables_url, "POST", "/admin/maintenance/run",
                             {"tableArn": table_arn, "type": "icebergCompaction"})
        assert run.status_code == 200, run.text
        run = run.json()
        print("compaction run:", run)
        # Every partition has several small files (one per append): compaction rewrites them.
        assert run["outcome"] == "Successful" and run["filesIn"] >= 2, run
        assert rows(catalog.load_table(f"dst.{name}").scan().to_arrow()) == after


def test_unreachable_source_fails_and_leaves_no_table(server, destination):
    s3tables = make_client(server.tables_url)
    source = {"uri": f"http://127.0.0.1:{free_port()}", "namespace": ["src"], "name": "events",
              "auth": {"type": "bearer", "token": "secret-token"}}
    migration = start(server, start_request(source, "icebergRestTable", destination, "unreachable", "copy"))
    got = settle(s3tables, migrationId=migration)
    assert got["state"] == "failed", got
    assert got["failureReason"]["code"] == "resourceNotFound", got
    assert "unreachable" in got["failureReason"]["detail"], got
    assert "tableARN" not in got
    # The secret is never shown back, and the database holds it sealed (a sync needs it again).
    assert "secret-token" not in json.dumps(got, default=str)
    stored = b"".join(p.read_bytes() for p in server.data_dir.glob("meta.db*"))
    assert b"sealed1:" in stored and b"secret-token" not in stored
    with pytest.raises(ClientError) as missing:
        s3tables.get_table(tableBucketARN=destination, namespace="dst", name="unreachable")
    assert missing.value.response["Error"]["Code"] == "NotFoundException"
    names = [t["name"] for t in s3tables.list_tables(tableBucketARN=destination)["tables"]]
    assert "unreachable" not in names
    failed = s3tables.list_table_migrations(tableBucketARN=destination, state="failed")["migrations"]
    assert migration in [m["migrationId"] for m in failed]


def test_bad_requests_change_nothing(server, destination):
    s3tables = make_client(server.tables_url)
    s3tables.create_table(tableBucketARN=destination, namespace="dst", name="taken", format="ICEBERG")
    source = {"uri": "http://127.0.0.1:1", "namespace": ["src"], "name": "events", "auth": {"type": "none"}}
    done = tablebay_cli(server, "start", "--request",
                        json.dumps(start_request(source, "icebergRestTable", destination, "taken", "copy")))
    assert done.returncode != 0 and "409" in done.stderr and "already exists" in done.stderr, done.stderr
    with pytest.raises(ClientError) as glue:
        s3tables.start_table_migration(
            roleARN=ROLE, sourceType="glueTable",
            source={"glueTable": {"catalogId": "111122223333", "databaseName": "db", "tableName": "t"}},
            destinationTable={"tableBucketARN": destination, "namespace": "dst", "name": "from_glue"},
            migrationOutput={"bucket": REPORTS})
    assert glue.value.response["ResponseMetadata"]["HTTPStatusCode"] == 400
    assert "AWS Glue" in glue.value.response["Error"]["Message"]
    for bad in ({"dataMigration": {"dataMode": "teleport"}}, {"roleARN": "not-a-role"},
                {"sourceType": "icebergMetadata"}):
        request = {**start_request(source, "icebergRestTable", destination, "bad_input", "copy"), **bad}
        done = tablebay_cli(server, "start", "--request", json.dumps(request))
        assert done.returncode != 0 and "BadRequestException" in done.stderr, (bad, done.stderr)
    assert s3tables.list_table_migrations(tableBucketARN=destination, state="planning")["migrations"] == []
    with pytest.raises(ClientError) as unknown:
        s3tables.get_table_migration(migrationId="0190d6f0-0000-7000-8000-000000000000")
    assert unknown.value.response["Error"]["Code"] == "NotFoundException"


def test_metadata_location_migration_from_seaweedfs(server, destination, tmp_path_factory):
    """A table whose files are on a third-party S3 store (SeaweedFS), written there through a second
    RESTCatalogServer with S3FileIO, migrated from its metadata file alone."""
    weed = subprocess.run([str(REPO / "scripts" / "seaweedfs.sh"), "build"], capture_output=True, text=True)
    if weed.returncode != 0:
        pytest.skip(f"SeaweedFS could not be built here: {weed.stderr[-300:]}")
    run_dir = tmp_path_factory.mktemp("weed")
    env = {**os.environ, "TABLEBAY_WEED_DIR": str(run_dir), "TABLEBAY_WEED_PORT": str(free_port_block()),
           "TABLEBAY_WEED_BUCKET": "warehouse"}
    started = subprocess.run([str(REPO / "scripts" / "seaweedfs.sh"), "start"], env=env, capture_output=True,
                             text=True, timeout=180)
    assert started.returncode == 0, started.stderr[-2000:]
    endpoint = started.stdout.strip().splitlines()[-1]
    keys = {"access": "weedtestkey", "secret": "weedtestsecret"}
    source = None
    try:
        source = RestSource(run_dir, {
            "CATALOG_WAREHOUSE": "s3://warehouse/wh", "CATALOG_IO__IMPL": "org.apache.iceberg.aws.s3.S3FileIO",
            "CATALOG_S3_ENDPOINT": endpoint, "CATALOG_S3_PATH__STYLE__ACCESS": "true",
            "CATALOG_S3_ACCESS__KEY__ID": keys["access"], "CATALOG_S3_SECRET__ACCESS__KEY": keys["secret"],
            "CATALOG_CLIENT_REGION": REGION, "AWS_REGION": REGION})
        catalog = RestCatalog("weed", uri=source.uri, **{
            "s3.endpoint": endpoint, "s3.access-key-id": keys["access"], "s3.secret-access-key": keys["secret"],
            "s3.region": REGION, "s3.path-style-access": "true"})
        catalog.create_namespace("src")
        table = catalog.create_table("src.on_weed", SCHEMA, partition_spec=SPEC)
        table.append(batch(0, 20))
        table.append(batch(20, 20))
        table = catalog.load_table("src.on_weed")
        assert table.metadata_location.startswith("s3://warehouse/"), table.metadata_location
        request = {"metadataLocation": table.metadata_location,
                   "s3": {"endpoint": endpoint, "region": REGION, "accessKeyId": keys["access"],
                          "secretAccessKey": keys["secret"], "pathStyle": True}}
        s3tables = make_client(server.tables_url)
        migration = start(server, start_request(request, "icebergMetadata", destination, "from_weed", "copy"))
        got = settle(s3tables, migrationId=migration)
        assert got["state"] == "succeeded", got
        # boto3 shows a source its model lacks as SDK_UNKNOWN_MEMBER; the CLI shows it, secrets hidden.
        shown = tablebay_cli(server, "get", "--migration-id", migration)
        assert shown.returncode == 0, shown.stderr
        shown = json.loads(shown.stdout)["source"]["icebergMetadata"]
        assert shown["s3"]["secretAccessKey"] == "****" and shown["metadataLocation"] == table.metadata_location
        migrated = rest_catalog(server, destination).load_table("dst.from_weed")
        assert snapshot_rows(migrated) == snapshot_rows(table)
        assert all(task.file.file_path.startswith(migrated.location()) for task in migrated.scan().plan_files())
    finally:
        if source is not None:
            source.stop()
        subprocess.run([str(REPO / "scripts" / "seaweedfs.sh"), "stop"], env=env, capture_output=True, timeout=60)


def free_port_block() -> int:
    """A port p with p..p+4 and their gRPC twins (p+10000…) free, as scripts/seaweedfs.sh takes them."""
    for _ in range(50):
        base = free_port()
        if base + 10004 > 65535:
            continue
        try:
            socks = []
            for port in [base + i for i in range(5)] + [base + 10000 + i for i in range(5)]:
                s = socket.socket()
                s.bind(("127.0.0.1", port))
                socks.append(s)
            for s in socks:
                s.close()
            return base
        except OSError:
            for s in socks:
                s.close()
    raise AssertionError("no free port block for SeaweedFS")
