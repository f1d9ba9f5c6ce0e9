"""Raw Iceberg REST requests (SigV4-signed with botocore, as PyIceberg signs them) for what the issue asks of the
wire and no client library shows directly: `ETag`/`If-None-Match` → 304, `snapshots=refs|all`, `Idempotency-Key`
replays, `POST /transactions/commit` (all tables or none), register, the metrics endpoint, server-side rebase of a
commit whose requirements still hold, and 400 for an unknown update (issue 4, reference/iceberg-rest.md §1–§4).

Snapshots here are catalog-only commits (`add-snapshot` with a manifest list that is never written): the catalog
does not read manifest lists, so none of this needs the S3 data plane.
"""

from __future__ import annotations

import json
import random
import time
import uuid

import pytest

from tablebay_test.expect import unique
from tablebay_test.iceberg import assert_error_model, catalog_prefix, iceberg_request

SCHEMA = {"type": "struct", "schema-id": 0, "fields": [
    {"id": 1, "name": "id", "type": "long", "required": True},
    {"id": 2, "name": "data", "type": "string", "required": False},
]}


class Catalog:
    """Signed requests against one bucket's prefix."""

    def __init__(self, server, warehouse: str):
        self.server = server
        self.prefix = catalog_prefix(server, warehouse)

    def __call__(self, method: str, path: str, body=None, **kw):
        return iceberg_request(self.server, method, f"/v1/{self.prefix}{path}", body, **kw)

    def create_namespace(self, name: str) -> None:
        resp = self("POST", "/namespaces", {"namespace": [name], "properties": {}})
        assert resp.status_code == 200, resp.text

    def create_table(self, ns: str, name: str) -> dict:
        resp = self("POST", f"/namespaces/{ns}/tables", {"name": name, "schema": SCHEMA})
        assert resp.status_code == 200, resp.text
        return resp.json()

    def load(self, ns: str, name: str, query: str = "") -> dict:
        resp = self("GET", f"/namespaces/{ns}/tables/{name}{query}")
        assert resp.status_code == 200, resp.text
        return resp.json()


def append_change(ns: str, name: str, metadata: dict) -> dict:
    """The catalog part of an append on top of `metadata` (as PyIceberg sends it, with `identifier`)."""
    parent = metadata.get("current-snapshot-id")
    parent = None if parent in (None, -1) else parent
    snapshot_id = random.getrandbits(62) + 1
    snapshot = {
        "snapshot-id": snapshot_id, "sequence-number": int(metadata.get("last-sequence-number", 0)) + 1,
        "timestamp-ms": int(time.time() * 1000), "summary": {"operation": "append"}, "schema-id": 0,
        "manifest-list": f"{metadata['location']}/metadata/snap-{snapshot_id}-1-{uuid.uuid4()}.avro",
    }
    if parent is not None:
        snapshot["parent-snapshot-id"] = parent
    return {
        "identifier": {"namespace": [ns], "name": name},
        "requirements": [{"type": "assert-ref-snapshot-id", "ref": "main", "snapshot-id": parent},
                         {"type": "assert-table-uuid", "uuid": metadata["table-uuid"]}],
        "updates": [{"action": "add-snapshot", "snapshot": snapshot},
                    {"action": "set-snapshot-ref", "ref-name": "main", "type": "branch", "snapshot-id": snapshot_id}],
    }


@pytest.fixture
def cat(server, bucket):
    c = Catalog(server, bucket.arn)
    c.ns = unique("ns", "_")
    c.create_namespace(c.ns)
    return c


def test_commit_response_and_metadata_file_versions(cat):
    created = cat.create_table(cat.ns, "t")
    assert created["metadata-location"].endswith(".metadata.json") and "/metadata/00000-" in created["metadata-location"]
    assert isinstance(created.get("config", {}), dict)
    resp = cat("POST", f"/namespaces/{cat.ns}/tables/t", append_change(cat.ns, "t", created["metadata"]))
    assert resp.status_code == 200, resp.text
    body = resp.json()
    assert "/metadata/00001-" in body["metadata-location"], body["metadata-location"]
    assert body["metadata"]["current-snapshot-id"] == body["metadata"]["snapshots"][0]["snapshot-id"]
    assert body["metadata"]["last-sequence-number"] == 1
    assert body["metadata"]["metadata-log"][-1]["metadata-file"] == created["metadata-location"]
    assert cat.load(cat.ns, "t")["metadata-location"] == body["metadata-location"]


def test_etag_and_if_none_match(cat):
    cat.create_table(cat.ns, "t")
    first = cat("GET", f"/namespaces/{cat.ns}/tables/t")
    etag = first.headers.get("ETag")
    assert etag, f"no ETag on load: {dict(first.headers)}"
    not_modified = cat("GET", f"/namespaces/{cat.ns}/tables/t", headers={"If-None-Match": etag})
    assert not_modified.status_code == 304, not_modified.text
    assert not not_modified.content
    cat("POST", f"/namespaces/{cat.ns}/tables/t", append_change(cat.ns, "t", first.json()["metadata"]))
    changed = cat("GET", f"/namespaces/{cat.ns}/tables/t", headers={"If-None-Match": etag})
    assert changed.status_code == 200 and changed.headers.get("ETag") not in (None, etag), changed.headers


def test_snapshots_all_and_refs(cat):
    metadata = cat.create_table(cat.ns, "t")["metadata"]
    for _ in range(3):
        resp = cat("POST", f"/namespaces/{cat.ns}/tables/t", append_change(cat.ns, "t", metadata))
        assert resp.status_code == 200, resp.text
        metadata = resp.json()["metadata"]
    everything = cat.load(cat.ns, "t", "?snapshots=all")["metadata"]
    default = cat.load(cat.ns, "t")["metadata"]
    refs = cat.load(cat.ns, "t", "?snapshots=refs")["metadata"]
    assert len(everything["snapshots"]) == 3 == len(default["snapshots"])
    assert [s["snapshot-id"] for s in refs["snapshots"]] == [metadata["current-snapshot-id"]], refs["snapshots"]


def test_server_side_rebase_when_requirements_still_hold(cat):
    """Trap 15: a property change made on an old base lands on top of the current metadata."""
    base = cat.create_table(cat.ns, "t")["metadata"]
    moved = cat("POST", f"/namespaces/{cat.ns}/tables/t", append_change(cat.ns, "t", base)).json()["metadata"]
    resp = cat("POST", f"/namespaces/{cat.ns}/tables/t", {
        "requirements": [{"type": "assert-table-uuid", "uuid": base["table-uuid"]}],
        "updates": [{"action": "set-properties", "updates": {"k": "v"}}]})
    assert resp.status_code == 200, resp.text
    out = resp.json()["metadata"]
    assert out["properties"].get("k") == "v"
    assert out["current-snapshot-id"] == moved["current-snapshot-id"], "the rebase kept the other commit"


def test_stale_append_is_409_commit_failed(cat):
    base = cat.create_table(cat.ns, "t")["metadata"]
    assert cat("POST", f"/namespaces/{cat.ns}/tables/t", append_change(cat.ns, "t", base)).status_code == 200
    resp = cat("POST", f"/namespaces/{cat.ns}/tables/t", append_change(cat.ns, "t", base))
    err = assert_error_model(resp, 409, "CommitFailedException")
    assert err["message"].startswith("Requirement failed: branch main"), err


def test_unknown_update_and_requirement_are_400(cat):
    created = cat.create_table(cat.ns, "t")
    resp = cat("POST", f"/namespaces/{cat.ns}/tables/t",
               {"requirements": [], "updates": [{"action": "make-it-fast"}]})
    assert_error_model(resp, 400)
    resp = cat("POST", f"/namespaces/{cat.ns}/tables/t",
               {"requirements": [{"type": "assert-magic"}], "updates": []})
    assert_error_model(resp, 400)
    assert cat.load(cat.ns, "t")["metadata-location"] == created["metadata-location"], "nothing was committed"


def test_idempotency_key_replays_the_original_response(cat):
    base = cat.create_table(cat.ns, "t")["metadata"]
    key = str(uuid.uuid4())
    change = append_change(cat.ns, "t", base)
    first = cat("POST", f"/namespaces/{cat.ns}/tables/t", change, headers={"Idempotency-Key": key})
    assert first.status_code == 200, first.text
    again = cat("POST", f"/namespaces/{cat.ns}/tables/t", change, headers={"Idempotency-Key": key})
    assert again.status_code == 200, f"a replayed commit must return the original response: {again.text[:300]}"
    assert again.json()["metadata-location"] == first.json()["metadata-location"]
    assert len(cat.load(cat.ns, "t")["metadata"]["snapshots"]) == 1, "applied once"

    create = {"name": "created_once", "schema": SCHEMA}
    key = str(uuid.uuid4())
    c1 = cat("POST", f"/namespaces/{cat.ns}/tables", create, headers={"Idempotency-Key": key})
    c2 = cat("POST", f"/namespaces/{cat.ns}/tables", create, headers={"Idempotency-Key": key})
    assert c1.status_code == 200 == c2.status_code, (c1.text[:200], c2.text[:200])
    assert c1.json()["metadata-location"] == c2.json()["metadata-location"]
    # Without the key, the same create is a conflict.
    assert_error_model(cat("POST", f"/namespaces/{cat.ns}/tables", create), 409, "AlreadyExistsException")


def test_multi_table_transaction_is_all_or_nothing(cat):
    a = cat.create_table(cat.ns, "a")["metadata"]
    b = cat.create_table(cat.ns, "b")["metadata"]
    stale_b = dict(b)
    # b moves, so a transaction built on the old b must fail as a whole.
    cat("POST", f"/namespaces/{cat.ns}/tables/b", append_change(cat.ns, "b", b))
    resp = cat("POST", "/transactions/commit", {"table-changes": [
        append_change(cat.ns, "a", a), append_change(cat.ns, "b", stale_b)]})
    assert_error_model(resp, 409, "CommitFailedException")
    unchanged = cat.load(cat.ns, "a")["metadata"]
    assert unchanged.get("current-snapshot-id") in (None, -1) and not unchanged.get("snapshots"), \
        "table a must be unchanged"

    b_now = cat.load(cat.ns, "b")["metadata"]
    resp = cat("POST", "/transactions/commit", {"table-changes": [
        append_change(cat.ns, "a", a), append_change(cat.ns, "b", b_now)]})
    assert resp.status_code == 204, resp.text
    assert len(cat.load(cat.ns, "a")["metadata"]["snapshots"]) == 1
    assert len(cat.load(cat.ns, "b")["metadata"]["snapshots"]) == 2


def test_register_and_metrics(cat):
    created = cat.create_table(cat.ns, "orig")
    register = {"name": "copy", "metadata-location": created["metadata-location"]}
    # A storage belongs to one table: a live table's files are not registered twice (issue 14).
    assert_error_model(cat("POST", f"/namespaces/{cat.ns}/register", register), 409, "AlreadyExistsException")
    # Dropped without purge, the table's storage is registered again under the new name.
    assert cat("DELETE", f"/namespaces/{cat.ns}/tables/orig").status_code == 204
    resp = cat("POST", f"/namespaces/{cat.ns}/register", register)
    assert resp.status_code == 200, resp.text
    assert resp.json()["metadata-location"] == created["metadata-location"]
    assert cat.load(cat.ns, "copy")["metadata"]["table-uuid"] == created["metadata"]["table-uuid"]
    assert_error_model(cat("POST", f"/namespaces/{cat.ns}/register", register), 409, "AlreadyExistsException")

    report = {"report-type": "commit-report", "table-name": f"{cat.ns}.copy", "snapshot-id": 1,
              "sequence-number": 1, "operation": "append", "metrics": {}}
    resp = cat("POST", f"/namespaces/{cat.ns}/tables/copy/metrics", report)
    assert resp.status_code == 204, resp.text


@pytest.mark.parametrize("flag", ["true", "True", "TRUE"])
def test_purge_requested_parsed_case_insensitively(cat, flag):
    cat.create_table(cat.ns, "p")
    resp = cat("DELETE", f"/namespaces/{cat.ns}/tables/p?purgeRequested={flag}")
    assert resp.status_code == 204, resp.text
    assert cat("HEAD", f"/namespaces/{cat.ns}/tables/p").status_code == 404


def test_success_codes_are_200_or_204_never_201(cat):
    """Trap 1: Java accepts only 200, 202, 204."""
    r = cat("POST", "/namespaces", {"namespace": ["codes"], "properties": {}})
    assert r.status_code == 200
    r = cat("POST", "/namespaces/codes/tables", {"name": "t", "schema": SCHEMA})
    assert r.status_code == 200
    r = cat("POST", "/tables/rename", {"source": {"namespace": ["codes"], "name": "t"},
                                       "destination": {"namespace": ["codes"], "name": "u"}})
    assert r.status_code == 204, r.text
    assert cat("DELETE", "/namespaces/codes/tables/u").status_code == 204
    assert cat("DELETE", "/namespaces/codes").status_code == 204
    body = cat("GET", "/namespaces").json()
    assert isinstance(body["namespaces"], list) and body.get("next-page-token") in (None,), json.dumps(body)[:300]
