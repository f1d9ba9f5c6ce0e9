"""PyIceberg's RestCatalog against `<tables url>/iceberg`, SigV4-signed: everything that needs no data
files (namespaces, create/load/rename/drop, schema evolution, stage-create, partition specs, listing,
errors, auth), and the one-table-two-APIs contract with the control plane (issue 4, reference/iceberg-rest.md).

Data writes are in test_pyiceberg_data.py (they need the S3 data plane).
"""

from __future__ import annotations

import json
import re

import pytest
from pyiceberg.exceptions import (
    BadRequestError,
    CommitFailedException,
    ForbiddenError,
    NamespaceAlreadyExistsError,
    NamespaceNotEmptyError,
    NoSuchNamespaceError,
    NoSuchTableError,
    TableAlreadyExistsError,
)
from pyiceberg.partitioning import PartitionField, PartitionSpec
from pyiceberg.schema import Schema
from pyiceberg.transforms import DayTransform
from pyiceberg.types import LongType, NestedField, StringType, TimestampType

from tablebay_test import ACCESS_KEY_ID, REGION
from tablebay_test.expect import bucket_arn, unique
from tablebay_test.iceberg import (
    assert_error_model,
    catalog_prefix,
    catalog_uri,
    config_response,
    iceberg_request,
    oauth_rest_catalog,
    rest_catalog,
)
from tablebay_test.samples import METADATA_SCHEMA
from tablebay_test.signing import signed_request

UUID = r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"
TABLE_LOCATION_RE = re.compile(rf"^s3://{UUID}--table-s3$")

SCHEMA = Schema(
    NestedField(1, "id", LongType(), required=True),
    NestedField(2, "ts", TimestampType(), required=False),
    NestedField(3, "note", StringType(), required=False),
)


def metadata_file_re(location: str, version: int) -> re.Pattern:
    return re.compile(rf"^{re.escape(location)}/metadata/{version:05d}-{UUID}\.metadata\.json$")


# --- /v1/config ------------------------------------------------------------------------------------------

def test_config_hands_out_prefix_and_data_plane_settings(server, bucket):
    cfg = config_response(server, bucket.arn)
    assert isinstance(cfg.get("defaults"), dict) and isinstance(cfg.get("overrides"), dict), cfg
    merged = {**cfg["defaults"], **cfg["overrides"]}
    assert re.fullmatch(r"[A-Za-z0-9._-]+", merged.get("prefix", "")), f"prefix must be URL-safe: {cfg}"
    assert merged.get("s3.endpoint") == server.s3_url, cfg
    assert merged.get("s3.path-style-access") == "true", cfg
    assert merged.get("client.region") == REGION, cfg
    endpoints = cfg.get("endpoints")
    assert isinstance(endpoints, list), cfg
    for needed in ("GET /v1/{prefix}/namespaces", "HEAD /v1/{prefix}/namespaces/{namespace}",
                   "POST /v1/{prefix}/namespaces/{namespace}/tables/{table}",
                   "HEAD /v1/{prefix}/namespaces/{namespace}/tables/{table}",
                   "POST /v1/{prefix}/tables/rename", "POST /v1/{prefix}/transactions/commit"):
        assert needed in endpoints, f"{needed!r} not advertised: {endpoints}"
    assert all(re.fullmatch(r"(GET|HEAD|POST|PUT|DELETE) /v1/\S+", e) for e in endpoints), endpoints


def test_config_signed_as_s3tables_too(server, bucket):
    cfg = config_response(server, bucket.arn, service="s3tables")
    assert {**cfg["defaults"], **cfg["overrides"]}.get("prefix"), cfg


def test_url_encoded_arn_is_accepted_as_prefix(server, bucket, catalog):
    catalog.create_namespace("viaarn")
    encoded = bucket.arn.replace(":", "%3A").replace("/", "%2F")
    resp = iceberg_request(server, "GET", f"/v1/{encoded}/namespaces")
    assert resp.status_code == 200, resp.text
    assert ["viaarn"] in resp.json()["namespaces"], resp.text


def test_config_for_unknown_warehouse_is_an_error_model(server):
    resp = iceberg_request(server, "GET", "/v1/config?warehouse=" + bucket_arn("no-such-bucket-here")
                           .replace(":", "%3A").replace("/", "%2F"))
    assert resp.status_code in (400, 404), resp.text
    assert_error_model(resp, resp.status_code)


# --- namespaces ------------------------------------------------------------------------------------------

def test_namespace_lifecycle_and_properties(catalog):
    name = unique("ns", "_")
    catalog.create_namespace(name, {"owner": "alice", "team": "data"})
    assert catalog.namespace_exists(name)
    assert (name,) in catalog.list_namespaces()
    props = catalog.load_namespace_properties(name)
    assert props.get("owner") == "alice" and props.get("team") == "data", props

    summary = catalog.update_namespace_properties(name, removals={"team", "never-set"}, updates={"tier": "gold"})
    assert summary.updated == ["tier"], summary
    assert summary.removed == ["team"], summary
    assert summary.missing == ["never-set"], summary
    props = catalog.load_namespace_properties(name)
    assert props.get("tier") == "gold" and "team" not in props and props.get("owner") == "alice", props

    with pytest.raises(NamespaceAlreadyExistsError):
        catalog.create_namespace(name)
    catalog.drop_namespace(name)
    assert not catalog.namespace_exists(name)
    with pytest.raises(NoSuchNamespaceError):
        catalog.load_namespace_properties(name)
    with pytest.raises(NoSuchNamespaceError):
        catalog.drop_namespace(name)
    with pytest.raises(NoSuchNamespaceError):
        catalog.update_namespace_properties(name, updates={"a": "b"})


def test_drop_non_empty_namespace_is_refused(catalog, ns):
    catalog.create_table((ns, "t"), SCHEMA)
    with pytest.raises(NamespaceNotEmptyError):
        catalog.drop_namespace(ns)
    assert catalog.table_exists((ns, "t"))


def test_multi_level_namespace_is_a_clear_400(server, bucket, catalog):
    with pytest.raises(BadRequestError):
        catalog.create_namespace(("a", "b"))
    prefix = catalog_prefix(server, bucket.arn)
    resp = iceberg_request(server, "POST", f"/v1/{prefix}/namespaces", {"namespace": ["a", "b"], "properties": {}})
    assert_error_model(resp, 400)


def test_namespace_responses_always_carry_properties(server, bucket, catalog):
    """Trap 13: `properties: {}` (never null), and `missing: []` in the update response."""
    catalog.create_namespace("bare")
    prefix = catalog_prefix(server, bucket.arn)
    got = iceberg_request(server, "GET", f"/v1/{prefix}/namespaces/bare").json()
    assert got["namespace"] == ["bare"] and isinstance(got["properties"], dict), got
    upd = iceberg_request(server, "POST", f"/v1/{prefix}/namespaces/bare/properties",
                          {"removals": [], "updates": {"k": "v"}}).json()
    assert upd == {"updated": ["k"], "removed": [], "missing": []} or (
        upd["updated"] == ["k"] and upd["removed"] == [] and upd.get("missing") == []), upd


# --- tables ----------------------------------------------------------------------------------------------

def test_table_create_load_list_drop(catalog, ns):
    table = catalog.create_table((ns, "events"), SCHEMA, properties={"owner.team": "data"})
    assert TABLE_LOCATION_RE.match(table.location()), table.location()
    assert metadata_file_re(table.location(), 0).match(table.metadata_location), table.metadata_location
    assert [f.name for f in table.schema().fields] == ["id", "ts", "note"]
    assert table.properties.get("owner.team") == "data"
    assert table.metadata.format_version == 2

    loaded = catalog.load_table((ns, "events"))
    assert loaded.metadata.table_uuid == table.metadata.table_uuid
    assert loaded.metadata_location == table.metadata_location
    assert catalog.table_exists((ns, "events"))
    assert (ns, "events") in catalog.list_tables(ns)

    catalog.drop_table((ns, "events"))
    assert not catalog.table_exists((ns, "events"))
    with pytest.raises(NoSuchTableError):
        catalog.load_table((ns, "events"))
    assert catalog.list_tables(ns) == []


def test_table_errors_map_to_pyiceberg_exceptions(catalog, ns):
    catalog.create_table((ns, "t"), SCHEMA)
    with pytest.raises(TableAlreadyExistsError):
        catalog.create_table((ns, "t"), SCHEMA)
    with pytest.raises(NoSuchNamespaceError):
        catalog.create_table(("missing_ns", "t"), SCHEMA)
    with pytest.raises(NoSuchTableError):
        catalog.load_table((ns, "missing"))
    with pytest.raises(NoSuchTableError):
        catalog.load_table(("missing_ns", "t"))
    with pytest.raises(NoSuchTableError):
        catalog.drop_table((ns, "missing"))
    with pytest.raises(NoSuchNamespaceError):
        catalog.list_tables("missing_ns")


def test_error_bodies_use_the_reference_types_and_messages(server, bucket, catalog, ns):
    """Trap 3: a table in a missing namespace is `NoSuchTableException`; messages as the Java reference."""
    prefix = catalog_prefix(server, bucket.arn)
    err = assert_error_model(iceberg_request(server, "GET", f"/v1/{prefix}/namespaces/{ns}/tables/nope"),
                             404, "NoSuchTableException")
    assert err["message"].startswith(f"Table does not exist: {ns}.nope"), err
    err = assert_error_model(iceberg_request(server, "GET", f"/v1/{prefix}/namespaces/nope_ns/tables/t"),
                             404, "NoSuchTableException")
    assert err["message"].startswith("Table does not exist: nope_ns.t"), err
    err = assert_error_model(iceberg_request(server, "GET", f"/v1/{prefix}/namespaces/nope_ns"),
                             404, "NoSuchNamespaceException")
    assert err["message"].startswith("Namespace does not exist: nope_ns"), err
    err = assert_error_model(iceberg_request(server, "POST", f"/v1/{prefix}/namespaces/nope_ns/tables",
                                             {"name": "t", "schema": {"type": "struct", "fields": []}}),
                             404, "NoSuchNamespaceException")
    err = assert_error_model(iceberg_request(server, "POST", f"/v1/{prefix}/namespaces",
                                             {"namespace": [ns], "properties": {}}),
                             409, "AlreadyExistsException")
    assert err["message"].startswith(f"Namespace already exists: {ns}"), err
    catalog.create_table((ns, "dup"), SCHEMA)
    err = assert_error_model(iceberg_request(server, "POST", f"/v1/{prefix}/namespaces/{ns}/tables",
                                             {"name": "dup", "schema": json.loads(SCHEMA.model_dump_json())}),
                             409, "AlreadyExistsException")
    assert err["message"].startswith(f"Table already exists: {ns}.dup"), err


def test_head_and_boolean_spellings(server, bucket, catalog, ns):
    """Trap 11 (HEAD → 204/404) and trap 12 (`purgeRequested=False`, PyIceberg's spelling)."""
    catalog.create_table((ns, "h"), SCHEMA)
    prefix = catalog_prefix(server, bucket.arn)
    assert iceberg_request(server, "HEAD", f"/v1/{prefix}/namespaces/{ns}").status_code in (200, 204)
    assert iceberg_request(server, "HEAD", f"/v1/{prefix}/namespaces/nope_ns").status_code == 404
    assert iceberg_request(server, "HEAD", f"/v1/{prefix}/namespaces/{ns}/tables/h").status_code in (200, 204)
    assert iceberg_request(server, "HEAD", f"/v1/{prefix}/namespaces/{ns}/tables/nope").status_code == 404
    resp = iceberg_request(server, "DELETE", f"/v1/{prefix}/namespaces/{ns}/tables/h?purgeRequested=False")
    assert resp.status_code == 204, resp.text
    assert not catalog.table_exists((ns, "h"))


def test_rename_within_and_across_namespaces(catalog, ns):
    other = unique("ns", "_")
    catalog.create_namespace(other)
    created = catalog.create_table((ns, "before"), SCHEMA)
    renamed = catalog.rename_table((ns, "before"), (ns, "after"))
    assert renamed.metadata.table_uuid == created.metadata.table_uuid
    assert not catalog.table_exists((ns, "before"))
    moved = catalog.rename_table((ns, "after"), (other, "moved"))
    assert moved.metadata.table_uuid == created.metadata.table_uuid
    assert catalog.list_tables(ns) == [] and catalog.list_tables(other) == [(other, "moved")]

    catalog.create_table((ns, "taken"), SCHEMA)
    with pytest.raises(TableAlreadyExistsError):
        catalog.rename_table((other, "moved"), (ns, "taken"))
    with pytest.raises(NoSuchTableError):
        catalog.rename_table((ns, "ghost"), (ns, "ghost2"))


def test_schema_evolution_commits_a_new_metadata_file(catalog, ns):
    table = catalog.create_table((ns, "evolve"), SCHEMA)
    v0 = table.metadata_location
    with table.update_schema() as update:
        update.add_column("extra", StringType(), doc="added later")
    assert metadata_file_re(table.location(), 1).match(table.metadata_location), table.metadata_location
    reloaded = catalog.load_table((ns, "evolve"))
    assert reloaded.metadata_location == table.metadata_location
    assert reloaded.schema().schema_id == 1
    assert [f.name for f in reloaded.schema().fields] == ["id", "ts", "note", "extra"]
    assert reloaded.schema().find_field("extra").field_id == 4
    assert reloaded.metadata.last_column_id == 4
    assert reloaded.metadata.metadata_log[-1].metadata_file == v0, reloaded.metadata.metadata_log

    with reloaded.update_schema() as update:
        update.rename_column("note", "comment")
        update.make_column_optional("id")
    again = catalog.load_table((ns, "evolve"))
    assert [f.name for f in again.schema().fields] == ["id", "ts", "comment", "extra"]
    assert not again.schema().find_field("id").required
    assert len(again.schemas()) == 3


def test_conflicting_schema_commits_raise_commit_failed(catalog, ns):
    catalog.create_table((ns, "race"), SCHEMA)
    first = catalog.load_table((ns, "race"))
    second = catalog.load_table((ns, "race"))
    with first.update_schema() as update:
        update.add_column("a", StringType())
    with pytest.raises(CommitFailedException, match="current schema changed"):
        with second.update_schema() as update:
            update.add_column("b", StringType())
    final = catalog.load_table((ns, "race"))
    assert [f.name for f in final.schema().fields] == ["id", "ts", "note", "a"]


def test_properties_commit(catalog, ns):
    table = catalog.create_table((ns, "props"), SCHEMA)
    with table.transaction() as tx:
        tx.set_properties({"commit.retry.num-retries": "7", "custom": "x"})
    with table.transaction() as tx:
        tx.remove_properties("custom")
    props = catalog.load_table((ns, "props")).properties
    assert props.get("commit.retry.num-retries") == "7" and "custom" not in props, props


def test_stage_create_then_commit_with_assert_create(catalog, ns):
    """`create_table_transaction` = `stage-create: true` + a commit with `assert-create` (trap 10)."""
    tx = catalog.create_table_transaction((ns, "staged"), SCHEMA, properties={"stage": "yes"})
    assert not catalog.table_exists((ns, "staged")), "a staged table must not exist before its commit"
    tx.set_properties({"more": "1"})
    table = tx.commit_transaction()
    assert catalog.table_exists((ns, "staged"))
    loaded = catalog.load_table((ns, "staged"))
    assert loaded.properties.get("stage") == "yes" and loaded.properties.get("more") == "1", loaded.properties
    assert TABLE_LOCATION_RE.match(loaded.location()), loaded.location()
    assert loaded.metadata_location == table.metadata_location

    # Staging a name that exists is refused at once, as the Java reference does (`stageTableCreate`).
    with pytest.raises(TableAlreadyExistsError):
        catalog.create_table_transaction((ns, "staged"), SCHEMA)

    # Two stages of one name race: the first commit wins, the second `assert-create` fails.
    first = catalog.create_table_transaction((ns, "raced"), SCHEMA)
    second = catalog.create_table_transaction((ns, "raced"), SCHEMA)
    first.commit_transaction()
    with pytest.raises((TableAlreadyExistsError, CommitFailedException)):
        second.commit_transaction()
    assert catalog.load_table((ns, "raced")).metadata.table_uuid == first.table_metadata.table_uuid


def test_partitioned_table_with_day_transform(catalog, ns):
    spec = PartitionSpec(PartitionField(source_id=2, field_id=1000, transform=DayTransform(), name="ts_day"))
    table = catalog.create_table((ns, "daily"), SCHEMA, partition_spec=spec)
    loaded = catalog.load_table((ns, "daily"))
    fields = loaded.spec().fields
    assert len(fields) == 1 and isinstance(fields[0].transform, DayTransform), loaded.spec()
    assert loaded.schema().find_field(fields[0].source_id).name == "ts"
    assert fields[0].name == "ts_day"
    assert table.metadata.last_partition_id == 1000 == loaded.metadata.last_partition_id


def test_listing_many_namespaces_and_tables_pages_through_everything(server, bucket):
    catalog = rest_catalog(server, bucket.arn, **{"rest-page-size": "7"})
    namespaces = [f"ns_{i:03d}" for i in range(23)]
    for name in namespaces:
        catalog.create_namespace(name)
    tables = [f"t_{i:03d}" for i in range(31)]
    for name in tables:
        catalog.create_table(("ns_000", name), SCHEMA)
    listed_ns = catalog.list_namespaces()
    assert sorted(listed_ns) == [(n,) for n in namespaces], listed_ns
    listed_tables = catalog.list_tables("ns_000")
    assert sorted(listed_tables) == [("ns_000", t) for t in tables], listed_tables

    # Trap 4 by hand: the first call with `pageToken=` (as Java sends it), never an empty next token.
    prefix = catalog_prefix(server, bucket.arn)
    seen, token, pages = [], "", 0
    while token is not None:
        resp = iceberg_request(server, "GET", f"/v1/{prefix}/namespaces/ns_000/tables?pageToken={token}&pageSize=10")
        assert resp.status_code == 200, resp.text
        body = resp.json()
        seen += [i["name"] for i in body["identifiers"]]
        token = body.get("next-page-token")
        assert token != "", "an empty next-page-token makes Java and iceberg-rust loop forever"
        pages += 1
        assert pages < 20
    assert sorted(seen) == tables and pages >= 4
    # Without pageToken (PyIceberg 0.10) the server returns everything at once.
    body = iceberg_request(server, "GET", f"/v1/{prefix}/namespaces/ns_000/tables").json()
    assert len(body["identifiers"]) == len(tables) and not body.get("next-page-token"), body


# --- one table, two APIs ---------------------------------------------------------------------------------

def test_control_plane_table_loads_in_pyiceberg(server, s3tables, bucket, catalog):
    s3tables.create_namespace(tableBucketARN=bucket.arn, namespace=["cp"])
    s3tables.create_table(tableBucketARN=bucket.arn, namespace="cp", name="from_boto", format="ICEBERG",
                          metadata=METADATA_SCHEMA)
    got = s3tables.get_table(tableBucketARN=bucket.arn, namespace="cp", name="from_boto")
    table = catalog.load_table(("cp", "from_boto"))
    assert table.metadata_location == got["metadataLocation"]
    assert table.location() == got["warehouseLocation"]
    assert [(f.name, str(f.field_type), f.required) for f in table.schema().fields] == [
        ("id", "long", True), ("ts", "timestamp", False), ("note", "string", False)]


def test_pyiceberg_commit_moves_version_token_and_metadata_location(server, s3tables, bucket, catalog):
    catalog.create_namespace("cp")
    table = catalog.create_table(("cp", "both"), SCHEMA)
    before = s3tables.get_table(tableBucketARN=bucket.arn, namespace="cp", name="both")
    assert before["metadataLocation"] == table.metadata_location
    assert before["format"] == "ICEBERG"
    v0_location = table.metadata_location

    with table.update_schema() as update:
        update.add_column("extra", StringType())
    after = s3tables.get_table(tableBucketARN=bucket.arn, namespace="cp", name="both")
    assert after["metadataLocation"] == table.metadata_location != v0_location
    assert after["versionToken"] != before["versionToken"]

    # And the other way: UpdateTableMetadataLocation (back to v0) is what PyIceberg loads next.
    s3tables.update_table_metadata_location(tableBucketARN=bucket.arn, namespace="cp", name="both",
                                            versionToken=after["versionToken"], metadataLocation=v0_location)
    reloaded = catalog.load_table(("cp", "both"))
    assert reloaded.metadata_location == v0_location
    assert [f.name for f in reloaded.schema().fields] == ["id", "ts", "note"]
    # A commit from the stale object fails: its requirements no longer hold.
    with pytest.raises(CommitFailedException):
        with table.update_schema() as update:
            update.add_column("late", StringType())


def test_control_plane_rename_and_delete_are_seen_by_pyiceberg(s3tables, bucket, catalog):
    catalog.create_namespace("cp")
    catalog.create_table(("cp", "old"), SCHEMA)
    s3tables.rename_table(tableBucketARN=bucket.arn, namespace="cp", name="old", newName="new")
    assert not catalog.table_exists(("cp", "old")) and catalog.table_exists(("cp", "new"))
    s3tables.delete_table(tableBucketARN=bucket.arn, namespace="cp", name="new")
    assert not catalog.table_exists(("cp", "new"))


# --- signing names, auth -------------------------------------------------------------------------------

@pytest.mark.parametrize("signing_name", ["osstables", "s3tables"])
def test_both_signing_names_work(server, bucket, signing_name):
    catalog = rest_catalog(server, bucket.arn, signing_name=signing_name)
    catalog.create_namespace(f"signed_{signing_name}")
    table = catalog.create_table((f"signed_{signing_name}", "t"), SCHEMA)
    with table.update_schema() as update:
        update.add_column("x", StringType())
    assert catalog.load_table((f"signed_{signing_name}", "t")).schema().find_field("x")


def test_unsigned_and_badly_signed_requests_are_403(server, bucket):
    path = "/iceberg/v1/config?warehouse=" + bucket.arn.replace(":", "%3A").replace("/", "%2F")
    assert_error_model(signed_request(server.tables_url, "GET", path, sign=False), 403)
    assert_error_model(signed_request(server.tables_url, "GET", path, service="osstables",
                                      secret_key="wrong-secret-0000000000000000000000000000"), 403)

    def tamper(headers, body):
        auth = headers["Authorization"]
        headers["Authorization"] = auth[:-4] + ("0000" if not auth.endswith("0000") else "1111")
        return headers, body

    assert_error_model(signed_request(server.tables_url, "GET", path, service="osstables", tamper=tamper), 403)
    with pytest.raises(ForbiddenError):
        rest_catalog(server, bucket.arn, **{"client.secret-access-key": "wrong-secret-000000000000000000000"})


def test_bad_signature_creates_nothing(server, bucket, catalog):
    prefix = catalog_prefix(server, bucket.arn)
    resp = signed_request(server.tables_url, "POST", f"/iceberg/v1/{prefix}/namespaces",
                          {"namespace": ["sneaky"], "properties": {}}, service="osstables",
                          secret_key="wrong-secret-0000000000000000000000000000")
    assert_error_model(resp, 403)
    assert not catalog.namespace_exists("sneaky")


# --- OAuth2 client credentials (for clients without SigV4) --------------------------------------------

def test_oauth_client_credentials_token(server, bucket):
    from tablebay_test import SECRET_ACCESS_KEY
    import requests

    url = catalog_uri(server) + "/v1/oauth/tokens"
    resp = requests.post(url, data={"grant_type": "client_credentials", "client_id": ACCESS_KEY_ID,
                                    "client_secret": SECRET_ACCESS_KEY, "scope": "catalog"}, timeout=30)
    assert resp.status_code == 200, resp.text
    token = resp.json()
    assert token.get("access_token") and token.get("token_type", "").lower() == "bearer", token
    assert int(token.get("expires_in", 0)) > 0, token
    cfg = requests.get(catalog_uri(server) + "/v1/config", params={"warehouse": bucket.arn},
                       headers={"Authorization": f"Bearer {token['access_token']}"}, timeout=30)
    assert cfg.status_code == 200, cfg.text

    bad = requests.post(url, data={"grant_type": "client_credentials", "client_id": ACCESS_KEY_ID,
                                   "client_secret": "wrong"}, timeout=30)
    assert bad.status_code in (400, 401), bad.text
    assert bad.json().get("error") in ("invalid_client", "unauthorized_client", "invalid_request"), bad.text
    forged = requests.get(catalog_uri(server) + "/v1/config", params={"warehouse": bucket.arn},
                          headers={"Authorization": "Bearer not-a-token"}, timeout=30)
    assert forged.status_code in (401, 403), forged.text


def test_pyiceberg_with_oauth_bearer_token(server, bucket):
    catalog = oauth_rest_catalog(server, bucket.arn)
    catalog.create_namespace("oauth_ns")
    table = catalog.create_table(("oauth_ns", "t"), SCHEMA)
    with table.update_schema() as update:
        update.add_column("x", StringType())
    assert catalog.list_tables("oauth_ns") == [("oauth_ns", "t")]
