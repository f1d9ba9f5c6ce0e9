"""GetTableMetadataLocation / UpdateTableMetadataLocation and the version token
(reference/s3tables-api.md §2 "Metadata location", §3.4, §5 CreateTable with metadata)."""

from concurrent.futures import ThreadPoolExecutor

from tablebay_test.clients import make_client
from tablebay_test.expect import (
    WAREHOUSE_RE, api_error, metadata_location_re, new_metadata_location, status,
)
from tablebay_test.samples import METADATA_SCHEMA


def location(s3tables, t, name=None):
    return s3tables.get_table_metadata_location(tableBucketARN=t.bucket_arn, namespace=t.namespace,
                                                name=name or t.name)


def test_table_without_metadata_has_no_location(s3tables, table):
    resp = location(s3tables, table)
    assert status(resp) == 200
    assert resp["versionToken"] == table.version_token
    assert WAREHOUSE_RE.match(resp["warehouseLocation"]), resp["warehouseLocation"]
    assert "metadataLocation" not in resp


def test_create_table_with_schema_writes_first_metadata_file(s3tables, namespace):
    arn = namespace.bucket.arn
    created = s3tables.create_table(tableBucketARN=arn, namespace=namespace.name, name="events",
                                    format="ICEBERG", metadata=METADATA_SCHEMA)
    resp = s3tables.get_table_metadata_location(tableBucketARN=arn, namespace=namespace.name, name="events")
    warehouse = resp["warehouseLocation"]
    assert WAREHOUSE_RE.match(warehouse), warehouse
    assert metadata_location_re(warehouse, 0).match(resp["metadataLocation"]), resp["metadataLocation"]
    assert resp["versionToken"] == created["versionToken"]
    got = s3tables.get_table(tableArn=created["tableARN"])
    assert got["metadataLocation"] == resp["metadataLocation"]
    assert got["warehouseLocation"] == warehouse


def test_update_metadata_location(s3tables, table):
    warehouse = location(s3tables, table)["warehouseLocation"]
    target = new_metadata_location(warehouse, 1)
    resp = s3tables.update_table_metadata_location(
        tableBucketARN=table.bucket_arn, namespace=table.namespace, name=table.name,
        versionToken=table.version_token, metadataLocation=target)
    assert status(resp) == 200
    assert resp["name"] == table.name
    assert resp["tableARN"] == table.arn
    assert resp["namespace"] == [table.namespace]
    assert resp["metadataLocation"] == target
    assert isinstance(resp["versionToken"], str) and resp["versionToken"]
    assert resp["versionToken"] != table.version_token

    now = location(s3tables, table)
    assert now["metadataLocation"] == target
    assert now["versionToken"] == resp["versionToken"]
    assert now["warehouseLocation"] == warehouse
    got = s3tables.get_table(tableArn=table.arn)
    assert got["metadataLocation"] == target
    assert got["versionToken"] == resp["versionToken"]
    assert got["modifiedAt"] >= got["createdAt"]


def test_stale_version_token_is_conflict(s3tables, table):
    warehouse = location(s3tables, table)["warehouseLocation"]
    first = new_metadata_location(warehouse, 1)
    token = s3tables.update_table_metadata_location(
        tableBucketARN=table.bucket_arn, namespace=table.namespace, name=table.name,
        versionToken=table.version_token, metadataLocation=first)["versionToken"]

    with api_error("ConflictException", 409):
        s3tables.update_table_metadata_location(
            tableBucketARN=table.bucket_arn, namespace=table.namespace, name=table.name,
            versionToken=table.version_token, metadataLocation=new_metadata_location(warehouse, 2))
    with api_error("ConflictException", 409):
        s3tables.update_table_metadata_location(
            tableBucketARN=table.bucket_arn, namespace=table.namespace, name=table.name,
            versionToken="made-up-token", metadataLocation=new_metadata_location(warehouse, 2))
    unchanged = location(s3tables, table)
    assert (unchanged["metadataLocation"], unchanged["versionToken"]) == (first, token)


def test_every_commit_rotates_the_token(s3tables, table):
    warehouse = location(s3tables, table)["warehouseLocation"]
    tokens = [table.version_token]
    for version in range(1, 5):
        target = new_metadata_location(warehouse, version)
        resp = s3tables.update_table_metadata_location(
            tableBucketARN=table.bucket_arn, namespace=table.namespace, name=table.name,
            versionToken=tokens[-1], metadataLocation=target)
        tokens.append(resp["versionToken"])
        assert location(s3tables, table)["metadataLocation"] == target
    assert len(set(tokens)) == len(tokens), tokens


def test_metadata_location_follows_rename(s3tables, table):
    warehouse = location(s3tables, table)["warehouseLocation"]
    target = new_metadata_location(warehouse, 1)
    token = s3tables.update_table_metadata_location(
        tableBucketARN=table.bucket_arn, namespace=table.namespace, name=table.name,
        versionToken=table.version_token, metadataLocation=target)["versionToken"]
    s3tables.rename_table(tableBucketARN=table.bucket_arn, namespace=table.namespace, name=table.name,
                          newName="moved")
    resp = location(s3tables, table, name="moved")
    assert resp["metadataLocation"] == target
    assert resp["warehouseLocation"] == warehouse
    resp = s3tables.update_table_metadata_location(
        tableBucketARN=table.bucket_arn, namespace=table.namespace, name="moved",
        versionToken=location(s3tables, table, name="moved")["versionToken"],
        metadataLocation=new_metadata_location(warehouse, 2))
    assert resp["name"] == "moved" and resp["tableARN"] == table.arn
    assert resp["versionToken"] != token


def test_metadata_location_of_missing_table(s3tables, namespace):
    with api_error("NotFoundException", 404):
        s3tables.get_table_metadata_location(tableBucketARN=namespace.bucket.arn, namespace=namespace.name,
                                             name="absent")
    with api_error("NotFoundException", 404):
        s3tables.update_table_metadata_location(
            tableBucketARN=namespace.bucket.arn, namespace=namespace.name, name="absent",
            versionToken="t", metadataLocation="s3://x--table-s3/metadata/00001-a.metadata.json")


def test_metadata_location_too_long_is_rejected(s3tables, table):
    warehouse = location(s3tables, table)["warehouseLocation"]
    too_long = f"{warehouse}/metadata/" + "a" * 2048 + ".metadata.json"
    with api_error("BadRequestException", 400):
        s3tables.update_table_metadata_location(
            tableBucketARN=table.bucket_arn, namespace=table.namespace, name=table.name,
            versionToken=table.version_token, metadataLocation=too_long)
    assert location(s3tables, table)["versionToken"] == table.version_token


def test_concurrent_commits_with_one_token_have_one_winner(server, s3tables, table):
    # UpdateTableMetadataLocation is a compare-and-swap on the version token: of N racing commits
    # that all hold the same token, exactly one succeeds and the others get 409.
    warehouse = location(s3tables, table)["warehouseLocation"]
    targets = [new_metadata_location(warehouse, 1) for _ in range(8)]
    clients = [make_client(server.tables_url) for _ in targets]

    def commit(i):
        try:
            resp = clients[i].update_table_metadata_location(
                tableBucketARN=table.bucket_arn, namespace=table.namespace, name=table.name,
                versionToken=table.version_token, metadataLocation=targets[i])
            return ("ok", targets[i], resp["versionToken"])
        except clients[i].exceptions.ConflictException:
            return ("conflict", targets[i], None)

    with ThreadPoolExecutor(max_workers=len(targets)) as pool:
        outcomes = list(pool.map(commit, range(len(targets))))
    winners = [o for o in outcomes if o[0] == "ok"]
    assert len(winners) == 1, outcomes
    assert sum(o[0] == "conflict" for o in outcomes) == len(targets) - 1
    now = location(s3tables, table)
    assert (now["metadataLocation"], now["versionToken"]) == winners[0][1:]
