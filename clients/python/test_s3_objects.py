"""The data plane's object operations through boto3, on both blob backends (local directory and a remote
S3 store that is a second Tablebay): PutObject/GetObject/HeadObject/DeleteObject in each client mode,
ranged and conditional GETs, ListObjectsV2 (prefix, delimiter, pagination, StartAfter), DeleteObjects,
and a table's metadata.json readable through S3."""

from __future__ import annotations

import datetime as dt
import json

import pytest

from tablebay_test.expect import unique
from tablebay_test.s3 import (CLIENT_MODES, MIB, assert_absent, get_bytes, md5_etag, pattern, s3_error,
                              wire_recorder)
from tablebay_test.samples import METADATA_SCHEMA


@pytest.fixture(scope="module")
def table(s3env_both):
    return s3env_both.new_table()


@pytest.mark.parametrize("mode", CLIENT_MODES)
@pytest.mark.parametrize("size", [0, 1, 5000, 3 * MIB + 7])
def test_put_get_head_delete_each_client_mode(s3env_both, table, mode, size):
    s3 = s3env_both.client(mode)
    seen = wire_recorder(s3)
    key = f"objects/{mode}/{size}.bin"
    data = pattern(size, seed=size)
    put = s3.put_object(Bucket=table.bucket, Key=key, Body=data, ContentType="application/x-parquet",
                        Metadata={"writer": "tablebay-test"})
    assert put["ETag"] == md5_etag(data)
    sent = seen[-1]
    if mode == "default":
        assert "x-amz-checksum-crc32" in sent, sent
    elif mode == "trailer":
        assert sent.get("x-amz-content-sha256") == "STREAMING-UNSIGNED-PAYLOAD-TRAILER", sent
        assert sent.get("x-amz-trailer") == "x-amz-checksum-crc32", sent
        assert "aws-chunked" in sent.get("content-encoding", ""), sent
    else:
        assert not any(h.startswith("x-amz-checksum-") for h in sent), sent

    head = s3.head_object(Bucket=table.bucket, Key=key)
    assert head["ContentLength"] == size
    assert head["ETag"] == md5_etag(data)
    assert head["ContentType"] == "application/x-parquet"
    assert head["Metadata"] == {"writer": "tablebay-test"}
    assert abs((dt.datetime.now(dt.timezone.utc) - head["LastModified"]).total_seconds()) < 600

    got = s3.get_object(Bucket=table.bucket, Key=key)
    assert got["Body"].read() == data
    assert got["ContentLength"] == size
    assert got["ETag"] == md5_etag(data)

    deleted = s3.delete_object(Bucket=table.bucket, Key=key)
    assert deleted["ResponseMetadata"]["HTTPStatusCode"] == 204
    assert_absent(s3, table.bucket, key)


def test_overwrite_replaces_and_missing_key(s3env_both, table):
    s3 = s3env_both.client()
    s3.put_object(Bucket=table.bucket, Key="over/x", Body=b"first version")
    s3.put_object(Bucket=table.bucket, Key="over/x", Body=b"second")
    assert get_bytes(s3, table.bucket, "over/x") == b"second"
    assert s3.head_object(Bucket=table.bucket, Key="over/x")["ContentLength"] == 6
    with s3_error("NoSuchKey", 404):
        s3.get_object(Bucket=table.bucket, Key="over/never-written")
    # DeleteObject of a missing key is a 204, as on S3.
    assert s3.delete_object(Bucket=table.bucket, Key="over/never-written")["ResponseMetadata"]["HTTPStatusCode"] == 204


@pytest.mark.parametrize("key", [
    "with space/and+plus.parquet", "unicodé/ключ/数据.bin", "a=b&c;d,e@f$g'h(i)j!k*l", "deep/" * 20 + "leaf",
    "trailing/slash/", "percent%2Fnot-a-slash", "tilde~and_under-score.txt",
])
def test_keys_with_special_characters(s3env_both, table, key):
    s3 = s3env_both.client()
    s3.put_object(Bucket=table.bucket, Key=key, Body=key.encode())
    assert get_bytes(s3, table.bucket, key) == key.encode()
    listed = s3.list_objects_v2(Bucket=table.bucket, Prefix=key)
    assert [o["Key"] for o in listed["Contents"]] == [key]
    s3.delete_object(Bucket=table.bucket, Key=key)


# --- ranges ---

@pytest.fixture(scope="module")
def ranged(s3env_both, table):
    data = pattern(100_000, seed=7)
    s3env_both.client().put_object(Bucket=table.bucket, Key="ranged/obj", Body=data)
    return data


@pytest.mark.parametrize("spec,sl", [
    ("bytes=0-0", slice(0, 1)),
    ("bytes=0-9", slice(0, 10)),
    ("bytes=99990-", slice(99990, None)),
    ("bytes=-10", slice(-10, None)),           # suffix range
    ("bytes=-200000", slice(0, None)),        # suffix longer than the object: the whole object
    ("bytes=50000-50000", slice(50000, 50001)),
    ("bytes=99000-200000", slice(99000, None)),  # end past the object is clipped
])
def test_ranged_get(s3env_both, table, ranged, spec, sl):
    got = s3env_both.client().get_object(Bucket=table.bucket, Key="ranged/obj", Range=spec)
    expected = ranged[sl]
    assert got["Body"].read() == expected
    assert got["ResponseMetadata"]["HTTPStatusCode"] == 206
    assert got["ContentLength"] == len(expected)
    start = sl.start if sl.start is None or sl.start >= 0 else len(ranged) + sl.start
    start = start or 0
    assert got["ContentRange"] == f"bytes {start}-{start + len(expected) - 1}/{len(ranged)}"


def test_unsatisfiable_range(s3env_both, table, ranged):
    with s3_error("InvalidRange", 416):
        s3env_both.client().get_object(Bucket=table.bucket, Key="ranged/obj", Range="bytes=100000-100010")


# --- conditional GETs ---

def test_conditional_get(s3env_both, table, ranged):
    s3 = s3env_both.client()
    etag = md5_etag(ranged)
    assert s3.get_object(Bucket=table.bucket, Key="ranged/obj", IfMatch=etag)["Body"].read() == ranged
    with s3_error(("PreconditionFailed", "412"), 412):
        s3.get_object(Bucket=table.bucket, Key="ranged/obj", IfMatch='"0123456789abcdef0123456789abcdef"')
    with s3_error(("304", "NotModified"), 304):
        s3.get_object(Bucket=table.bucket, Key="ranged/obj", IfNoneMatch=etag)
    got = s3.get_object(Bucket=table.bucket, Key="ranged/obj", IfNoneMatch='"0123456789abcdef0123456789abcdef"')
    assert got["Body"].read() == ranged
    future = dt.datetime.now(dt.timezone.utc) + dt.timedelta(days=1)
    past = dt.datetime(2001, 1, 1, tzinfo=dt.timezone.utc)
    with s3_error(("304", "NotModified"), 304):
        s3.get_object(Bucket=table.bucket, Key="ranged/obj", IfModifiedSince=future)
    assert s3.get_object(Bucket=table.bucket, Key="ranged/obj", IfModifiedSince=past)["Body"].read() == ranged
    with s3_error(("PreconditionFailed", "412"), 412):
        s3.get_object(Bucket=table.bucket, Key="ranged/obj", IfUnmodifiedSince=past)
    # HEAD takes the same conditions.
    with s3_error(("304", "NotModified"), 304):
        s3.head_object(Bucket=table.bucket, Key="ranged/obj", IfNoneMatch=etag)
    with s3_error(("412", "PreconditionFailed"), 412):
        s3.head_object(Bucket=table.bucket, Key="ranged/obj", IfMatch='"ffffffffffffffffffffffffffffffff"')


# --- listing ---

LIST_KEYS = ["a/1", "a/2", "a/b/3", "a/b/4", "a/c/5", "c", "d/6", "e/7/8"]


@pytest.fixture(scope="module")
def listed_table(s3env_both):
    table = s3env_both.new_table()
    s3 = s3env_both.client()
    for key in LIST_KEYS:
        s3.put_object(Bucket=table.bucket, Key=key, Body=key.encode())
    return table


def test_list_objects_v2_prefix_and_delimiter(s3env_both, listed_table):
    s3 = s3env_both.client()
    everything = s3.list_objects_v2(Bucket=listed_table.bucket)
    assert [o["Key"] for o in everything["Contents"]] == sorted(LIST_KEYS)
    assert everything["KeyCount"] == len(LIST_KEYS)
    assert everything["IsTruncated"] is False
    for o in everything["Contents"]:
        assert o["Size"] == len(o["Key"])
        assert o["ETag"] == md5_etag(o["Key"].encode())

    top = s3.list_objects_v2(Bucket=listed_table.bucket, Delimiter="/")
    assert [o["Key"] for o in top["Contents"]] == ["c"]
    assert [p["Prefix"] for p in top["CommonPrefixes"]] == ["a/", "d/", "e/"]
    assert top["KeyCount"] == 4

    a = s3.list_objects_v2(Bucket=listed_table.bucket, Prefix="a/", Delimiter="/")
    assert [o["Key"] for o in a["Contents"]] == ["a/1", "a/2"]
    assert [p["Prefix"] for p in a["CommonPrefixes"]] == ["a/b/", "a/c/"]

    assert s3.list_objects_v2(Bucket=listed_table.bucket, Prefix="zzz").get("Contents", []) == []
    after = s3.list_objects_v2(Bucket=listed_table.bucket, StartAfter="a/b/4")
    assert [o["Key"] for o in after["Contents"]] == ["a/c/5", "c", "d/6", "e/7/8"]


def test_list_objects_v2_pagination(s3env_both, listed_table):
    s3 = s3env_both.client()
    keys, tokens, pages = [], set(), 0
    kwargs = {"Bucket": listed_table.bucket, "MaxKeys": 3}
    while True:
        page = s3.list_objects_v2(**kwargs)
        pages += 1
        assert page["KeyCount"] == len(page.get("Contents", [])) <= 3
        keys += [o["Key"] for o in page.get("Contents", [])]
        if not page["IsTruncated"]:
            assert "NextContinuationToken" not in page
            break
        token = page["NextContinuationToken"]
        assert token not in tokens
        tokens.add(token)
        kwargs["ContinuationToken"] = token
    assert keys == sorted(LIST_KEYS) and pages == 3

    # boto3's paginator, with a delimiter: prefixes and keys each once.
    seen_keys, seen_prefixes = [], []
    for page in s3.get_paginator("list_objects_v2").paginate(Bucket=listed_table.bucket, Delimiter="/",
                                                             PaginationConfig={"PageSize": 1}):
        seen_keys += [o["Key"] for o in page.get("Contents", [])]
        seen_prefixes += [p["Prefix"] for p in page.get("CommonPrefixes", [])]
    assert seen_keys == ["c"] and seen_prefixes == ["a/", "d/", "e/"]


def test_delete_objects(s3env_both):
    s3 = s3env_both.client()
    table = s3env_both.new_table()
    keys = [f"del/{i}" for i in range(5)]
    for key in keys:
        s3.put_object(Bucket=table.bucket, Key=key, Body=b"x")
    resp = s3.delete_objects(Bucket=table.bucket, Delete={"Objects": [{"Key": k} for k in keys[:3] + ["del/missing"]]})
    assert sorted(d["Key"] for d in resp["Deleted"]) == sorted(keys[:3] + ["del/missing"])
    assert resp.get("Errors", []) == []
    quiet = s3.delete_objects(Bucket=table.bucket, Delete={"Objects": [{"Key": keys[3]}], "Quiet": True})
    assert quiet.get("Deleted", []) == [] and quiet.get("Errors", []) == []
    remaining = s3.list_objects_v2(Bucket=table.bucket)
    assert [o["Key"] for o in remaining["Contents"]] == [keys[4]]


@pytest.mark.parametrize("mode", CLIENT_MODES)
def test_delete_objects_each_client_mode(s3env_both, mode):
    """DeleteObjects requires Content-MD5 or a flexible checksum (rust-stack.md T16): each mode sends one."""
    s3 = s3env_both.client(mode)
    table = s3env_both.new_table()
    s3.put_object(Bucket=table.bucket, Key="k", Body=b"x")
    resp = s3.delete_objects(Bucket=table.bucket, Delete={"Objects": [{"Key": "k"}]})
    assert [d["Key"] for d in resp["Deleted"]] == ["k"]
    assert_absent(s3, table.bucket, "k")


def test_tables_do_not_share_keys(s3env_both):
    """Table A's key is not visible in table B's bucket, and writing B does not touch A."""
    s3 = s3env_both.client()
    a, b = s3env_both.new_table(), s3env_both.new_table()
    s3.put_object(Bucket=a.bucket, Key="data/shared-name.parquet", Body=b"from A")
    assert_absent(s3, b.bucket, "data/shared-name.parquet")
    assert s3.list_objects_v2(Bucket=b.bucket).get("Contents", []) == []
    s3.put_object(Bucket=b.bucket, Key="data/shared-name.parquet", Body=b"from B")
    assert get_bytes(s3, a.bucket, "data/shared-name.parquet") == b"from A"
    assert get_bytes(s3, b.bucket, "data/shared-name.parquet") == b"from B"


def test_table_metadata_json_is_readable(s3env_both):
    """A table created with a schema has its metadata.json in its own bucket, as Iceberg metadata."""
    env = s3env_both
    table = env.new_table(metadata=METADATA_SCHEMA)
    location = env.tables.get_table_metadata_location(tableBucketARN=env.bucket_arn, namespace=table.namespace,
                                                       name=table.name)["metadataLocation"]
    prefix = f"s3://{table.bucket}/"
    assert location.startswith(prefix), (location, table.warehouse)
    key = location[len(prefix):]
    s3 = env.client()
    assert key in [o["Key"] for o in s3.list_objects_v2(Bucket=table.bucket, Prefix="metadata/")["Contents"]]
    doc = json.loads(get_bytes(s3, table.bucket, key))
    assert doc["format-version"] in (2, 3)
    assert doc["location"].rstrip("/") == table.warehouse
    table_uuid = table.bucket.removesuffix("--table-s3")
    assert doc["table-uuid"] == table_uuid or doc["table-uuid"]  # the table's id or Iceberg's own uuid
    schema = next(s for s in doc["schemas"] if s["schema-id"] == doc["current-schema-id"])
    assert [f["name"] for f in schema["fields"]] == ["id", "ts", "note"]
    assert [f["type"] for f in schema["fields"]] == ["long", "timestamp", "string"]


def test_bytes_live_in_the_configured_backend(s3env_both):
    """The bytes really go to the configured blob store: `<data-dir>/blobs` for the local backend, and the
    second Tablebay's bucket under `blobs/` for the remote one."""
    env = s3env_both
    table = env.new_table()
    data = pattern(300_000, seed=99)
    env.client().put_object(Bucket=table.bucket, Key=f"proof/{unique('x')}", Body=data)
    if env.backend == "local":
        blobs = env.server.data_dir / "blobs"
        sizes = [p.stat().st_size for p in blobs.rglob("*") if p.is_file()]
        where = str(blobs)
    else:
        from tablebay_test.s3 import make_s3_client
        store_s3 = make_s3_client(env.store.s3_url)
        sizes = []
        for page in store_s3.get_paginator("list_objects_v2").paginate(Bucket=env.store_table.bucket,
                                                                       Prefix="blobs/"):
            sizes += [o["Size"] for o in page.get("Contents", [])]
        where = f"s3://{env.store_table.bucket}/blobs/ on the second Tablebay"
    assert sizes, f"nothing was written to {where}"
    assert sum(sizes) >= len(data), f"{where} holds {sum(sizes)} bytes, less than the {len(data)} just written"
