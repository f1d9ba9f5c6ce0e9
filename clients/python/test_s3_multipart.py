"""Multipart uploads through boto3 on both blob backends: parts out of order, a retried (re-uploaded)
part, the `"<md5>-N"` ETag, ranged GETs across part boundaries, ListParts, ListMultipartUploads,
AbortMultipartUpload, and CompleteMultipartUpload's validation (InvalidPart, InvalidPartOrder,
EntityTooSmall, NoSuchUpload)."""

from __future__ import annotations

import pytest

from tablebay_test.s3 import (CLIENT_MODES, MIB, assert_absent, get_bytes, md5_etag, multipart_etag, pattern,
                              s3_error)

PART = 5 * MIB  # S3's minimum size for every part but the last


@pytest.fixture(scope="module")
def table(s3env_both):
    return s3env_both.new_table()


def _upload(s3, bucket, key, upload_id, number, data):
    return s3.upload_part(Bucket=bucket, Key=key, UploadId=upload_id, PartNumber=number, Body=data)["ETag"]


@pytest.mark.parametrize("mode", CLIENT_MODES)
def test_out_of_order_with_a_retried_part(s3env_both, table, mode):
    s3 = s3env_both.client(mode)
    key = f"mpu/{mode}/data.parquet"
    parts = {1: pattern(PART, 1), 2: pattern(PART, 2), 3: pattern(PART + 123, 3), 4: pattern(777, 4)}
    upload_id = s3.create_multipart_upload(Bucket=table.bucket, Key=key, ContentType="application/x-parquet")["UploadId"]
    etags = {}
    for n in (3, 1, 4):
        etags[n] = _upload(s3, table.bucket, key, upload_id, n, parts[n])
        assert etags[n] == md5_etag(parts[n])
    # Part 2 first with bytes that must not survive, then re-uploaded: the second upload replaces it.
    stale = pattern(PART, 222)
    assert _upload(s3, table.bucket, key, upload_id, 2, stale) == md5_etag(stale)
    etags[2] = _upload(s3, table.bucket, key, upload_id, 2, parts[2])
    assert etags[2] == md5_etag(parts[2])

    listed = s3.list_parts(Bucket=table.bucket, Key=key, UploadId=upload_id)
    assert [(p["PartNumber"], p["ETag"], p["Size"]) for p in listed["Parts"]] == [
        (n, md5_etag(parts[n]), len(parts[n])) for n in (1, 2, 3, 4)]
    assert_absent(s3, table.bucket, key)  # nothing is visible before Complete

    done = s3.complete_multipart_upload(Bucket=table.bucket, Key=key, UploadId=upload_id, MultipartUpload={
        "Parts": [{"PartNumber": n, "ETag": etags[n]} for n in (1, 2, 3, 4)]})
    whole = b"".join(parts[n] for n in (1, 2, 3, 4))
    assert done["ETag"] == multipart_etag([parts[n] for n in (1, 2, 3, 4)])
    assert done["Key"] == key and done["Bucket"] == table.bucket

    head = s3.head_object(Bucket=table.bucket, Key=key)
    assert head["ContentLength"] == len(whole)
    assert head["ETag"] == done["ETag"]
    assert head["ContentType"] == "application/x-parquet"
    assert get_bytes(s3, table.bucket, key) == whole

    # Ranged reads across part boundaries, and a suffix range reaching into part 3.
    for start, end in [(PART - 10, PART + 9), (PART - 1, 2 * PART), (0, 3 * PART + 5), (3 * PART + 100, 3 * PART + 200)]:
        got = s3.get_object(Bucket=table.bucket, Key=key, Range=f"bytes={start}-{end}")
        assert got["Body"].read() == whole[start:end + 1], (start, end)
        assert got["ContentRange"] == f"bytes {start}-{end}/{len(whole)}"
    suffix = s3.get_object(Bucket=table.bucket, Key=key, Range="bytes=-1000")["Body"].read()
    assert suffix == whole[-1000:]

    # The upload is gone once completed.
    with s3_error("NoSuchUpload", 404):
        s3.list_parts(Bucket=table.bucket, Key=key, UploadId=upload_id)
    s3.delete_object(Bucket=table.bucket, Key=key)


def test_part_numbers_1_and_10000(s3env_both, table):
    s3 = s3env_both.client()
    key = "mpu/sparse"
    upload_id = s3.create_multipart_upload(Bucket=table.bucket, Key=key)["UploadId"]
    first, last = pattern(PART, 11), b"tail"
    e_last = _upload(s3, table.bucket, key, upload_id, 10000, last)
    e_first = _upload(s3, table.bucket, key, upload_id, 1, first)
    done = s3.complete_multipart_upload(Bucket=table.bucket, Key=key, UploadId=upload_id, MultipartUpload={
        "Parts": [{"PartNumber": 1, "ETag": e_first}, {"PartNumber": 10000, "ETag": e_last}]})
    assert done["ETag"] == multipart_etag([first, last])
    assert get_bytes(s3, table.bucket, key) == first + last
    for bad in (0, 10001):
        up = s3.create_multipart_upload(Bucket=table.bucket, Key="mpu/bad-number")["UploadId"]
        with s3_error(("InvalidArgument", "InvalidPartNumber"), 400):
            s3.upload_part(Bucket=table.bucket, Key="mpu/bad-number", UploadId=up, PartNumber=bad, Body=b"x")
        s3.abort_multipart_upload(Bucket=table.bucket, Key="mpu/bad-number", UploadId=up)


def test_a_subset_of_the_uploaded_parts(s3env_both, table):
    """Complete may name only some of the uploaded parts; the others are dropped."""
    s3 = s3env_both.client()
    key = "mpu/subset"
    upload_id = s3.create_multipart_upload(Bucket=table.bucket, Key=key)["UploadId"]
    p1, p2, p3 = pattern(PART, 31), pattern(PART, 32), b"three"
    e1, _, e3 = (_upload(s3, table.bucket, key, upload_id, n, d) for n, d in ((1, p1), (2, p2), (3, p3)))
    done = s3.complete_multipart_upload(Bucket=table.bucket, Key=key, UploadId=upload_id, MultipartUpload={
        "Parts": [{"PartNumber": 1, "ETag": e1}, {"PartNumber": 3, "ETag": e3}]})
    assert done["ETag"] == multipart_etag([p1, p3])
    assert get_bytes(s3, table.bucket, key) == p1 + p3


def test_list_multipart_uploads_and_abort(s3env_both):
    s3 = s3env_both.client()
    table = s3env_both.new_table()
    ids = {}
    for key in ("logs/a", "logs/b", "data/c"):
        ids[key] = s3.create_multipart_upload(Bucket=table.bucket, Key=key)["UploadId"]
    second_a = s3.create_multipart_upload(Bucket=table.bucket, Key="logs/a")["UploadId"]
    assert second_a != ids["logs/a"]
    _upload(s3, table.bucket, "logs/a", ids["logs/a"], 1, b"part one")

    listed = s3.list_multipart_uploads(Bucket=table.bucket)
    pairs = sorted((u["Key"], u["UploadId"]) for u in listed["Uploads"])
    assert pairs == sorted([(k, v) for k, v in ids.items()] + [("logs/a", second_a)])
    logs = s3.list_multipart_uploads(Bucket=table.bucket, Prefix="logs/")
    assert sorted(u["Key"] for u in logs["Uploads"]) == ["logs/a", "logs/a", "logs/b"]

    s3.abort_multipart_upload(Bucket=table.bucket, Key="logs/a", UploadId=ids["logs/a"])
    with s3_error("NoSuchUpload", 404):
        s3.list_parts(Bucket=table.bucket, Key="logs/a", UploadId=ids["logs/a"])
    with s3_error("NoSuchUpload", 404):
        _upload(s3, table.bucket, "logs/a", ids["logs/a"], 2, b"late")
    with s3_error("NoSuchUpload", 404):
        s3.complete_multipart_upload(Bucket=table.bucket, Key="logs/a", UploadId=ids["logs/a"], MultipartUpload={
            "Parts": [{"PartNumber": 1, "ETag": md5_etag(b"part one")}]})
    remaining = {u["UploadId"] for u in s3.list_multipart_uploads(Bucket=table.bucket).get("Uploads", [])}
    assert ids["logs/a"] not in remaining and second_a in remaining
    assert_absent(s3, table.bucket, "logs/a")
    for key, upload_id in [("logs/b", ids["logs/b"]), ("data/c", ids["data/c"]), ("logs/a", second_a)]:
        s3.abort_multipart_upload(Bucket=table.bucket, Key=key, UploadId=upload_id)
    assert s3.list_multipart_uploads(Bucket=table.bucket).get("Uploads", []) == []


def test_list_parts_pagination(s3env_both, table):
    s3 = s3env_both.client()
    key = "mpu/many-parts"
    upload_id = s3.create_multipart_upload(Bucket=table.bucket, Key=key)["UploadId"]
    for n in range(1, 8):
        _upload(s3, table.bucket, key, upload_id, n, f"part {n}".encode())
    first = s3.list_parts(Bucket=table.bucket, Key=key, UploadId=upload_id, MaxParts=3)
    assert [p["PartNumber"] for p in first["Parts"]] == [1, 2, 3]
    assert first["IsTruncated"] is True and first["NextPartNumberMarker"] == 3
    rest = s3.list_parts(Bucket=table.bucket, Key=key, UploadId=upload_id, PartNumberMarker=3)
    assert [p["PartNumber"] for p in rest["Parts"]] == [4, 5, 6, 7]
    assert rest["IsTruncated"] is False
    s3.abort_multipart_upload(Bucket=table.bucket, Key=key, UploadId=upload_id)


def test_complete_validates_parts(s3env_both, table):
    s3 = s3env_both.client()
    key = "mpu/validated"
    upload_id = s3.create_multipart_upload(Bucket=table.bucket, Key=key)["UploadId"]
    p1, p2 = pattern(PART, 41), pattern(1000, 42)
    e1, e2 = _upload(s3, table.bucket, key, upload_id, 1, p1), _upload(s3, table.bucket, key, upload_id, 2, p2)

    with s3_error("InvalidPart", 400):  # wrong ETag
        s3.complete_multipart_upload(Bucket=table.bucket, Key=key, UploadId=upload_id, MultipartUpload={
            "Parts": [{"PartNumber": 1, "ETag": e1}, {"PartNumber": 2, "ETag": md5_etag(b"other")}]})
    with s3_error("InvalidPart", 400):  # a part never uploaded
        s3.complete_multipart_upload(Bucket=table.bucket, Key=key, UploadId=upload_id, MultipartUpload={
            "Parts": [{"PartNumber": 1, "ETag": e1}, {"PartNumber": 3, "ETag": e2}]})
    with s3_error("InvalidPartOrder", 400):
        s3.complete_multipart_upload(Bucket=table.bucket, Key=key, UploadId=upload_id, MultipartUpload={
            "Parts": [{"PartNumber": 2, "ETag": e2}, {"PartNumber": 1, "ETag": e1}]})
    assert_absent(s3, table.bucket, key)

    # A failed Complete leaves the upload usable.
    done = s3.complete_multipart_upload(Bucket=table.bucket, Key=key, UploadId=upload_id, MultipartUpload={
        "Parts": [{"PartNumber": 1, "ETag": e1}, {"PartNumber": 2, "ETag": e2}]})
    assert get_bytes(s3, table.bucket, key) == p1 + p2
    assert done["ETag"] == multipart_etag([p1, p2])


def test_parts_below_5_mib_are_too_small(s3env_both, table):
    s3 = s3env_both.client()
    key = "mpu/too-small"
    upload_id = s3.create_multipart_upload(Bucket=table.bucket, Key=key)["UploadId"]
    e1 = _upload(s3, table.bucket, key, upload_id, 1, b"a" * 1000)
    e2 = _upload(s3, table.bucket, key, upload_id, 2, b"b" * 1000)
    with s3_error("EntityTooSmall", 400):
        s3.complete_multipart_upload(Bucket=table.bucket, Key=key, UploadId=upload_id, MultipartUpload={
            "Parts": [{"PartNumber": 1, "ETag": e1}, {"PartNumber": 2, "ETag": e2}]})
    assert_absent(s3, table.bucket, key)
    s3.abort_multipart_upload(Bucket=table.bucket, Key=key, UploadId=upload_id)


def test_unknown_upload_id(s3env_both, table):
    s3 = s3env_both.client()
    with s3_error("NoSuchUpload", 404):
        s3.upload_part(Bucket=table.bucket, Key="mpu/x", UploadId="no-such-upload", PartNumber=1, Body=b"x")
    with s3_error("NoSuchUpload", 404):
        s3.abort_multipart_upload(Bucket=table.bucket, Key="mpu/x", UploadId="no-such-upload")


def test_boto3_managed_transfer(s3env_both, table, tmp_path):
    """boto3's transfer manager (s3transfer: threads, 8 MiB parts, its own checksum choices) up and down."""
    from boto3.s3.transfer import TransferConfig

    s3 = s3env_both.client()
    data = pattern(21 * MIB + 5, seed=51)
    src = tmp_path / "src.bin"
    src.write_bytes(data)
    cfg = TransferConfig(multipart_threshold=8 * MIB, multipart_chunksize=8 * MIB, max_concurrency=4)
    s3.upload_file(str(src), table.bucket, "mpu/managed.bin", Config=cfg)
    head = s3.head_object(Bucket=table.bucket, Key="mpu/managed.bin")
    assert head["ContentLength"] == len(data)
    assert head["ETag"].endswith('-3"'), head["ETag"]
    dst = tmp_path / "dst.bin"
    s3.download_file(table.bucket, "mpu/managed.bin", str(dst), Config=cfg)
    assert dst.read_bytes() == data


def test_incomplete_uploads_expire(tmp_path):
    """`--multipart-expiry-hours 0.001` (3.6 s): an incomplete upload is aborted and its parts removed,
    while completed objects stay."""
    import time

    from tablebay_test.clients import make_client
    from tablebay_test.s3 import create_table, create_table_home, make_s3_client
    from tablebay_test.server import TablebayServer

    srv = TablebayServer(tmp_path / "expiry", arn_flavor="aws", extra_args=("--multipart-expiry-hours", "0.001"))
    srv.start()
    try:
        tables = make_client(srv.tables_url)
        home = create_table_home(tables)
        table = create_table(tables, home.bucket_arn, home.namespace)
        s3 = make_s3_client(srv.s3_url)
        s3.put_object(Bucket=table.bucket, Key="done.bin", Body=b"complete object")
        upload_id = s3.create_multipart_upload(Bucket=table.bucket, Key="stale.bin")["UploadId"]
        _upload(s3, table.bucket, "stale.bin", upload_id, 1, pattern(PART, 91))
        deadline = time.monotonic() + 60
        while s3.list_multipart_uploads(Bucket=table.bucket).get("Uploads"):
            assert time.monotonic() < deadline, "the incomplete upload did not expire within 60 s"
            time.sleep(0.5)
        with s3_error("NoSuchUpload", 404):
            s3.list_parts(Bucket=table.bucket, Key="stale.bin", UploadId=upload_id)
        assert_absent(s3, table.bucket, "stale.bin")
        assert get_bytes(s3, table.bucket, "done.bin") == b"complete object"
        blobs = srv.data_dir / "blobs"
        deadline = time.monotonic() + 30
        while sum(p.stat().st_size for p in blobs.rglob("*") if p.is_file()) >= PART:
            assert time.monotonic() < deadline, "the expired upload's part bytes are still in the blob store"
            time.sleep(0.5)
    finally:
        srv.stop()
