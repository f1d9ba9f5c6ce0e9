"""Table replication (issue 20, part 2) with real clients and two real servers.

`source` (account 111122223333) replicates to `remote` (account 222233334444), a second `tablebay serve` that it
reaches only through its public APIs: `source` is started with `--replication-remotes`, naming the remote's
listeners and keys there, and the worker assumes a role on `remote` through its `/sts`. A same-server
destination uses a role on `source` itself.

- boto3 and the aws CLI for the eight operations, with their errors (a missing table, replication to itself,
  a configuration without rules, a stale version token) in the control plane's own error format;
- 200 PyIceberg commits on the source (appends, a delete, a schema change, a compaction run through the admin
  endpoint) reach the replica on the remote server, in order, exactly once, across a `kill -9` of the
  replicating server; the replica reads the same rows as the source at every sampled snapshot;
- a client write to the replica is refused; after DisassociateTableReplication it is accepted, and the
  source reports the destination as detached.
"""

from __future__ import annotations

import json
import os
import subprocess
import time
from types import SimpleNamespace

import boto3
import pyarrow as pa
import pytest
from botocore.config import Config
from botocore.exceptions import ClientError
from pyiceberg.exceptions import ForbiddenError
from pyiceberg.types import LongType, NestedField, StringType

from tablebay_test import ACCESS_KEY_ID, ACCOUNT_ID, REGION, SECRET_ACCESS_KEY
from tablebay_test.cli import AwsCli
from tablebay_test.clients import make_client
from tablebay_test.expect import api_error, assert_raw_error, unique
from tablebay_test.iceberg import rest_catalog
from tablebay_test.server import TablebayServer, binary_path
from tablebay_test.signing import signed_request

REMOTE_ACCOUNT = "222233334444"
COMMITS = 200
S3CFG = Config(retries={"max_attempts": 1, "mode": "standard"}, s3={"addressing_style": "path"})


def admin(server, *args: str) -> dict:
    """`tablebay admin …` as the instance root of `server`; its JSON answer."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AWS_", "TABLEBAY_"))}
    env.update(AWS_ACCESS_KEY_ID=ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY=SECRET_ACCESS_KEY,
               TABLEBAY_ENDPOINT=server.tables_url, TABLEBAY_REGION=REGION)
    proc = subprocess.run([str(binary_path()), "admin", *args], env=env, capture_output=True, text=True,
                          timeout=60)
    assert proc.returncode == 0, f"tablebay admin {args}: {proc.stdout} {proc.stderr}"
    return json.loads(proc.stdout)


def replication_role(server, account: str) -> str:
    """A role on `server` that trusts `account` and may do anything with tables: the replication role."""
    role = admin(server, "create-role", unique("replicator"), "--trust-policy", json.dumps({
        "Version": "2012-10-17",
        "Statement": [{"Effect": "Allow", "Principal": {"AWS": [account]}, "Action": "sts:AssumeRole"}]}))
    admin(server, "put-role-policy", role["roleName"], "all", "--document", json.dumps({
        "Version": "2012-10-17",
        "Statement": [{"Effect": "Allow", "Action": "s3tables:*", "Resource": "*"}]}))
    return role["roleArn"]


@pytest.fixture(scope="module")
def servers(tmp_path_factory):
    remote = TablebayServer(tmp_path_factory.mktemp("replica-server"), account_id=REMOTE_ACCOUNT)
    remote.start()
    remotes = tmp_path_factory.mktemp("replication-config") / "remotes.toml"
    remotes.write_text(
        "[[remote]]\n"
        f'account_id = "{REMOTE_ACCOUNT}"\n'
        f'endpoint = "{remote.tables_url}"\n'
        f's3_endpoint = "{remote.s3_url}"\n'
        f'signing_region = "{REGION}"\n'
        f'access_key_id = "{ACCESS_KEY_ID}"\n'
        f'secret_access_key = "{SECRET_ACCESS_KEY}"\n')
    remotes.chmod(0o600)
    source = TablebayServer(tmp_path_factory.mktemp("source-server"), extra_args=(
        "--replication-remotes", str(remotes),
        "--replication-poll-seconds", "0.5",
        "--replication-lease-seconds", "3",
    ))
    source.start()
    try:
        yield SimpleNamespace(
            source=source, remote=remote,
            remote_role=replication_role(remote, REMOTE_ACCOUNT),
            local_role=replication_role(source, ACCOUNT_ID),
            s3tables=make_client(source.tables_url), remote_s3tables=make_client(remote.tables_url))
    finally:
        source.stop()
        remote.stop()


def new_bucket(client) -> str:
    return client.create_table_bucket(name=unique("repl"))["arn"]


def config(role: str, *destinations: str) -> dict:
    return {"role": role, "rules": [{"destinations": [{"destinationTableBucketARN": d} for d in destinations]}]}


def status_of(client, table_arn: str) -> dict:
    return client.get_table_replication_status(tableArn=table_arn)


def wait_replicated(client, table_arn: str, metadata_location: str, timeout: float = 60) -> dict:
    """Polls GetTableReplicationStatus until every destination has replicated `metadata_location`."""
    deadline = time.monotonic() + timeout
    while True:
        got = status_of(client, table_arn)
        done = all(d["replicationStatus"] == "completed"
                   and d.get("lastSuccessfulReplicatedUpdate", {}).get("metadataLocation") == metadata_location
                   for d in got["destinations"])
        if done:
            return got
        assert time.monotonic() < deadline, f"not replicated within {timeout}s: {got}"
        time.sleep(0.2)


def rows(table, snapshot_id: int | None = None) -> list[tuple]:
    arrow = table.scan(snapshot_id=snapshot_id).to_arrow()
    names = sorted(arrow.column_names)
    return sorted(tuple(r[n] for n in names) for r in arrow.to_pylist())


def s3_client(server):
    return boto3.session.Session(aws_access_key_id=ACCESS_KEY_ID, aws_secret_access_key=SECRET_ACCESS_KEY,
                                 region_name=REGION).client("s3", endpoint_url=server.s3_url, config=S3CFG)


def replica_metadata(s3, location: str) -> dict:
    bucket, key = location.removeprefix("s3://").split("/", 1)
    return json.loads(s3.get_object(Bucket=bucket, Key=key)["Body"].read())


# --- the eight operations with boto3 and the aws CLI ---

def test_bucket_and_table_configurations_with_boto3(servers):
    tables = servers.s3tables
    source, dest = new_bucket(tables), new_bucket(tables)
    tables.create_namespace(tableBucketARN=source, namespace=["ns"])
    table_arn = tables.create_table(tableBucketARN=source, namespace="ns", name="t", format="ICEBERG")["tableARN"]

    with api_error("NotFoundException", 404):
        tables.get_table_bucket_replication(tableBucketARN=source)
    put = tables.put_table_bucket_replication(tableBucketARN=source, configuration=config(servers.local_role, dest))
    assert put["versionToken"] and put["status"]
    got = tables.get_table_bucket_replication(tableBucketARN=source)
    assert got["versionToken"] == put["versionToken"]
    assert got["configuration"] == config(servers.local_role, dest)
    # A stale version token is a conflict and changes nothing.
    with api_error("ConflictException", 409):
        tables.put_table_bucket_replication(tableBucketARN=source, versionToken="stale",
                                            configuration=config(servers.local_role, dest, new_bucket(tables)))
    assert tables.get_table_bucket_replication(tableBucketARN=source)["configuration"] == got["configuration"]

    # The bucket's configuration applies to its tables: the status lists its destination.
    status = status_of(tables, table_arn)
    assert status["sourceTableArn"] == table_arn
    assert [d["destinationTableBucketArn"] for d in status["destinations"]] == [dest]
    assert status["destinations"][0]["replicationStatus"] in ("pending", "completed")

    # A table's own configuration overrides its bucket's.
    other = new_bucket(tables)
    tput = tables.put_table_replication(tableArn=table_arn, configuration=config(servers.local_role, other))
    tgot = tables.get_table_replication(tableArn=table_arn)
    assert tgot["versionToken"] == tput["versionToken"] and tgot["configuration"] == config(servers.local_role, other)
    assert [d["destinationTableBucketArn"] for d in status_of(tables, table_arn)["destinations"]] == [other]
    with api_error("ConflictException", 409):
        tables.delete_table_replication(tableArn=table_arn, versionToken="stale")
    tables.delete_table_replication(tableArn=table_arn, versionToken=tput["versionToken"])
    with api_error("NotFoundException", 404):
        tables.get_table_replication(tableArn=table_arn)
    tables.delete_table_bucket_replication(tableBucketARN=source, versionToken=got["versionToken"])
    with api_error("NotFoundException", 404):
        tables.get_table_bucket_replication(tableBucketARN=source)
    with api_error("NotFoundException", 404):
        status_of(tables, table_arn)


def test_errors_with_boto3(servers):
    tables = servers.s3tables
    loose = boto3.session.Session(aws_access_key_id=ACCESS_KEY_ID, aws_secret_access_key=SECRET_ACCESS_KEY,
                                  region_name=REGION).client(
        "s3tables", endpoint_url=servers.source.tables_url,
        config=Config(retries={"max_attempts": 1}, parameter_validation=False))
    source, dest = new_bucket(tables), new_bucket(tables)
    missing = f"{source}/table/00000000-0000-7000-8000-000000000000"
    for call in (lambda: tables.put_table_replication(tableArn=missing, configuration=config(servers.local_role, dest)),
                 lambda: tables.get_table_replication(tableArn=missing),
                 lambda: tables.get_table_replication_status(tableArn=missing),
                 lambda: tables.delete_table_replication(tableArn=missing, versionToken="x"),
                 lambda: tables.disassociate_table_replication(tableArn=missing)):
        with api_error("NotFoundException", 404):
            call()
    # Replication to itself.
    with api_error("BadRequestException", 400):
        tables.put_table_bucket_replication(tableBucketARN=source, configuration=config(servers.local_role, source))
    # A configuration without rules (botocore's own validation off, so the server is the judge).
    with api_error("BadRequestException", 400):
        loose.put_table_bucket_replication(tableBucketARN=source,
                                           configuration={"role": servers.local_role, "rules": []})
    with api_error("BadRequestException", 400):
        loose.put_table_bucket_replication(tableBucketARN=source, configuration={
            "role": servers.local_role, "rules": [{"destinations": []}]})
    with api_error("BadRequestException", 400):
        loose.put_table_bucket_replication(tableBucketARN=source, configuration={
            "role": "not-a-role-arn-at-all", "rules": [{"destinations": [{"destinationTableBucketARN": dest}]}]})
    # Nothing of the refused puts was stored.
    with api_error("NotFoundException", 404):
        tables.get_table_bucket_replication(tableBucketARN=source)
    # Disassociating a table that is not a replica fails.
    tables.create_namespace(tableBucketARN=source, namespace=["ns"])
    arn = tables.create_table(tableBucketARN=source, namespace="ns", name="plain", format="ICEBERG")["tableARN"]
    with api_error("BadRequestException", 400):
        tables.disassociate_table_replication(tableArn=arn)


def test_bad_input_answers_the_control_plane_error_format(servers):
    url = servers.source.tables_url
    source = new_bucket(servers.s3tables)
    q = f"tableBucketARN={source.replace(':', '%3A').replace('/', '%2F')}"
    for method, path, body in [
        ("PUT", f"/table-bucket-replication?{q}", b"{"),
        ("PUT", f"/table-bucket-replication?{q}", json.dumps({"configuration": {"role": 1}}).encode()),
        ("PUT", "/table-bucket-replication", json.dumps({"configuration": config("arn:aws:iam::111122223333:role/r", source)}).encode()),
        ("DELETE", "/table-replication?tableArn=x", None),
        ("GET", "/replication-status", None),
    ]:
        resp = signed_request(url, method, path, body)
        assert_raw_error(resp, 400, ("BadRequestException",))
    resp = signed_request(url, "POST", "/table-replication/disassociate?tableArn=x", None)
    assert resp.status_code == 405, resp.text
    with api_error("NotFoundException", 404):
        servers.s3tables.get_table_bucket_replication(tableBucketARN=source)


def test_operations_with_the_aws_cli(servers, tmp_path):
    cli = AwsCli(servers.source.tables_url, tmp_path / "aws")
    tables = servers.s3tables
    source, dest = new_bucket(tables), new_bucket(tables)
    tables.create_namespace(tableBucketARN=source, namespace=["ns"])
    arn = tables.create_table(tableBucketARN=source, namespace="ns", name="t", format="ICEBERG")["tableARN"]
    conf = json.dumps(config(servers.local_role, dest))
    put = cli("put-table-bucket-replication", "--table-bucket-arn", source, "--configuration", conf)
    assert put["versionToken"]
    got = cli("get-table-bucket-replication", "--table-bucket-arn", source)
    assert got["configuration"] == json.loads(conf)
    tput = cli("put-table-replication", "--table-arn", arn, "--configuration", conf)
    assert cli("get-table-replication", "--table-arn", arn)["versionToken"] == tput["versionToken"]
    status = cli("get-table-replication-status", "--table-arn", arn)
    assert status["sourceTableArn"] == arn and status["destinations"][0]["destinationTableBucketArn"] == dest
    cli("delete-table-replication", "--table-arn", arn, "--version-token", tput["versionToken"])
    cli("delete-table-bucket-replication", "--table-bucket-arn", source)
    # The errors: a missing table, replication to itself, no rules (the CLI's own validation off). The pinned
    # CLI (aws-cli 1.46 on botocore 1.43) has no disassociate-table-replication yet: boto3 covers it.
    missing = f"{source}/table/00000000-0000-7000-8000-000000000000"
    err = cli.run("get-table-replication-status", "--table-arn", missing, check=False)
    assert err.returncode != 0 and "NotFoundException" in err.stderr, err.stderr
    err = cli.run("put-table-bucket-replication", "--table-bucket-arn", source, "--configuration",
                  json.dumps(config(servers.local_role, source)), check=False)
    assert err.returncode != 0 and "BadRequestException" in err.stderr, err.stderr
    (cli.home / "config").write_text("[default]\nparameter_validation = false\n")
    err = cli.run("put-table-bucket-replication", "--table-bucket-arn", source, "--configuration",
                  json.dumps({"role": servers.local_role, "rules": []}), check=False)
    assert err.returncode != 0 and "BadRequestException" in err.stderr, err.stderr
    err = cli.run("get-table-bucket-replication", "--table-bucket-arn", source, check=False)
    assert err.returncode != 0 and "NotFoundException" in err.stderr, err.stderr


# --- replication itself ---

SCHEMA_FIELDS = [NestedField(1, "id", LongType(), required=False), NestedField(2, "name", StringType(), required=False)]


def batch(start: int, n: int, extra: bool = False) -> pa.Table:
    data = {"id": pa.array(range(start, start + n), pa.int64()),
            "name": pa.array([f"row-{i}" for i in range(start, start + n)], pa.string())}
    if extra:
        data["score"] = pa.array([i * 2 for i in range(start, start + n)], pa.int64())
    return pa.table(data)


def test_same_server_destination(servers):
    tables = servers.s3tables
    source, dest = new_bucket(tables), new_bucket(tables)
    catalog = rest_catalog(servers.source, source)
    catalog.create_namespace("ns")
    from pyiceberg.schema import Schema
    table = catalog.create_table("ns.local", schema=Schema(*SCHEMA_FIELDS))
    tables.put_table_replication(tableArn=tables.get_table(tableBucketARN=source, namespace="ns", name="local")["tableARN"],
                                 configuration=config(servers.local_role, dest))
    for i in range(5):
        table.append(batch(i * 10, 10))
    table = catalog.load_table("ns.local")
    arn = tables.get_table(tableBucketARN=source, namespace="ns", name="local")["tableARN"]
    status = wait_replicated(tables, arn, table.metadata_location)
    replica_arn = status["destinations"][0]["destinationTableArn"]
    replica = rest_catalog(servers.source, dest).load_table("ns.local")
    assert tables.get_table(tableArn=replica_arn)["name"] == "local"
    assert [s.snapshot_id for s in replica.snapshots()] == [s.snapshot_id for s in table.snapshots()]
    assert rows(replica) == rows(table) and len(rows(table)) == 50
    # Read-only: a client commit is refused (403) and changes nothing.
    with pytest.raises(ForbiddenError):
        replica.append(batch(1000, 1))
    assert rows(rest_catalog(servers.source, dest).load_table("ns.local")) == rows(table)


def test_a_file_larger_than_one_copy_part_is_copied_in_parts(servers):
    """A 40 MiB data file (incompressible) is more than one 32 MiB copy part: it goes over as a multipart upload
    and reads back byte for byte."""
    import hashlib
    import os

    from pyiceberg.schema import Schema
    from pyiceberg.types import BinaryType, LongType, NestedField

    tables = servers.s3tables
    source, dest = new_bucket(tables), new_bucket(tables)
    catalog = rest_catalog(servers.source, source)
    catalog.create_namespace("ns")
    table = catalog.create_table("ns.big", schema=Schema(NestedField(1, "id", LongType(), required=False),
                                                         NestedField(2, "blob", BinaryType(), required=False)))
    arn = tables.get_table(tableBucketARN=source, namespace="ns", name="big")["tableARN"]
    tables.put_table_replication(tableArn=arn, configuration=config(servers.local_role, dest))
    blobs = [os.urandom(1024 * 1024) for _ in range(40)]
    table.append(pa.table({"id": pa.array(range(40), pa.int64()), "blob": pa.array(blobs, pa.binary())}))
    table = catalog.load_table("ns.big")
    [data_file] = list(table.inspect.files().to_pylist())
    assert data_file["file_size_in_bytes"] > 33 * 1024 * 1024, data_file["file_size_in_bytes"]
    wait_replicated(tables, arn, table.metadata_location, timeout=120)
    replica = rest_catalog(servers.source, dest).load_table("ns.big")
    [copied] = list(replica.inspect.files().to_pylist())
    assert copied["file_size_in_bytes"] == data_file["file_size_in_bytes"]
    got = {r["id"]: hashlib.sha256(r["blob"]).hexdigest() for r in replica.scan().to_arrow().to_pylist()}
    assert got == {i: hashlib.sha256(b).hexdigest() for i, b in enumerate(blobs)}


def test_two_hundred_commits_reach_the_remote_replica_exactly_once_across_kill_9(servers):
    from pyiceberg.schema import Schema
    tables, remote_tables = servers.s3tables, servers.remote_s3tables
    source = new_bucket(tables)
    dest = new_bucket(remote_tables)
    assert f":{REMOTE_ACCOUNT}:" in dest
    catalog = rest_catalog(servers.source, source)
    catalog.create_namespace("ns")
    table = catalog.create_table("ns.events", schema=Schema(*SCHEMA_FIELDS),
                                 properties={"write.metadata.previous-versions-max": "1000"})
    arn = tables.get_table(tableBucketARN=source, namespace="ns", name="events")["tableARN"]
    tables.put_table_replication(tableArn=arn, configuration=config(servers.remote_role, dest))

    marks: dict[str, int] = {}
    snapshots: list[int] = []
    began = time.monotonic()
    n, extra = 0, False
    for commit in range(COMMITS):
        if commit == 60:
            table.delete(delete_filter="id < 30")
            marks["delete"] = table.current_snapshot().snapshot_id
        elif commit == 100:
            with table.update_schema() as update:
                update.add_column("score", LongType())
            extra = True
            table = catalog.load_table("ns.events")
            marks["schema"] = len(snapshots)
            continue  # a schema change makes no snapshot
        elif commit == 130:
            # Compaction through the admin run-now endpoint (a maintenance commit on the source).
            r = signed_request(servers.source.tables_url, "POST", "/admin/maintenance/run",
                               {"tableArn": arn, "type": "icebergCompaction"}, timeout=120)
            assert r.status_code == 200, r.text
            table = catalog.load_table("ns.events")
            marks["compaction"] = table.current_snapshot().snapshot_id
        else:
            table.append(batch(n, 3, extra))
            n += 3
        if commit == 115:
            # kill -9 of the replicating server mid-stream (the replica lags a little behind), and restart.
            servers.source.kill()
            servers.source.start()
            catalog = rest_catalog(servers.source, source)
            table = catalog.load_table("ns.events")
            tables = servers.s3tables = make_client(servers.source.tables_url)
        snapshots.append(table.current_snapshot().snapshot_id)
    table = catalog.load_table("ns.events")
    wrote = time.monotonic()
    status = wait_replicated(tables, arn, table.metadata_location, timeout=90)
    print(f"commits took {wrote - began:.1f}s, replication caught up {time.monotonic() - wrote:.1f}s later")
    dest_status = status["destinations"][0]
    assert dest_status["destinationTableBucketArn"] == dest
    assert dest_status["destinationTableArn"].startswith(dest + "/table/")

    replica = rest_catalog(servers.remote, dest).load_table("ns.events")
    # The same snapshots, parents and sequence numbers, in the same order: nothing missing or duplicated.
    shape = lambda t: [(s.snapshot_id, s.parent_snapshot_id, s.sequence_number) for s in t.snapshots()]  # noqa: E731
    assert shape(replica) == shape(table)
    assert len(set(snapshots)) >= COMMITS - 2
    assert replica.schema().as_struct() == table.schema().as_struct()
    assert replica.metadata.properties["tablebay.replication.source-table-arn"] == arn
    assert replica.location().startswith("s3://") and replica.location() != table.location()

    # Every source version was committed to the replica exactly once, in order: the replica's metadata log,
    # read back file by file, names each source version once.
    # The log's first entries may predate the backfill (the source versions before replication began, never
    # written to the replica); after the first replicated one, every entry must exist.
    source_versions = [e.metadata_file for e in table.metadata.metadata_log] + [table.metadata_location]
    applied = []
    s3 = s3_client(servers.remote)
    for entry in replica.metadata.metadata_log:
        try:
            applied.append(replica_metadata(s3, entry.metadata_file)["properties"][
                "tablebay.replication.source-metadata-location"])
        except ClientError as e:
            assert not applied and e.response["Error"]["Code"] == "NoSuchKey", e
    applied.append(replica.metadata.properties["tablebay.replication.source-metadata-location"])
    assert applied == source_versions[source_versions.index(applied[0]):], "replicated versions differ from the source's"
    assert len(applied) == len(set(applied))

    # The same rows at each sampled snapshot: first, last, middle, and around the delete, the schema change,
    # the compaction and the kill.
    at = {snapshots[0], snapshots[-1], snapshots[len(snapshots) // 2], marks["delete"], marks["compaction"],
          snapshots[marks["schema"] - 1], snapshots[marks["schema"]], snapshots[114], snapshots[116]}
    checked = time.monotonic()
    for sid in sorted(at):
        assert rows(replica, sid) == rows(table, sid), f"snapshot {sid}"
    print(f"metadata log checked in {checked - wrote:.1f}s, rows of {len(at)} snapshots in "
          f"{time.monotonic() - checked:.1f}s")
    assert not [r for r in rows(replica, marks["delete"]) if r[0] is not None and r[0] < 30]

    # A client write to the replica is refused, through Iceberg REST and the control plane, and changes nothing.
    with pytest.raises(ForbiddenError):
        replica.append(batch(10_000, 1, extra=True))
    got = remote_tables.get_table(tableBucketARN=dest, namespace="ns", name="events")
    with api_error("AccessDeniedException", 403):
        remote_tables.update_table_metadata_location(tableBucketARN=dest, namespace="ns", name="events",
                                                    versionToken=got["versionToken"],
                                                    metadataLocation=got["metadataLocation"])
    assert remote_tables.get_table(tableBucketARN=dest, namespace="ns", name="events")["versionToken"] == got["versionToken"]

    # Disassociation: the replica becomes writable, permanently; the source reports the destination detached.
    remote_tables.disassociate_table_replication(tableArn=dest_status["destinationTableArn"])
    replica = rest_catalog(servers.remote, dest).load_table("ns.events")
    replica.append(batch(20_000, 2, extra=True))
    assert len(rows(rest_catalog(servers.remote, dest).load_table("ns.events"))) == len(rows(table)) + 2
    with api_error("BadRequestException", 400):
        remote_tables.disassociate_table_replication(tableArn=dest_status["destinationTableArn"])
    table.append(batch(30_000, 1, extra=True))
    deadline = time.monotonic() + 30
    while True:
        d = status_of(tables, arn)["destinations"][0]
        if d["replicationStatus"] == "failed":
            assert "detached" in d["failureMessage"], d
            break
        assert time.monotonic() < deadline, d
        time.sleep(0.2)
    assert len(rows(rest_catalog(servers.remote, dest).load_table("ns.events"))) == len(rows(table)) + 1
