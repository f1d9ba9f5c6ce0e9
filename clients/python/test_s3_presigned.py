"""Presigned URLs on the data plane: boto3's `generate_presigned_url` for GET and PUT (plain HTTP clients
use them), an expired URL, a tampered one, and presigned UploadPart.

botocore 1.44.8 presigns with SigV2 query parameters (`AWSAccessKeyId`, `Signature`, `Expires`) in
us-east-1 unless the client says `signature_version="s3v4"`; the SigV4 tests set it (as
docs/clients/s3-boto3.md says), and `test_default_presign_is_sigv2` records what a client at the defaults
gets: S3's refusal of SigV2 (test_s3_security.py has the rest)."""

from __future__ import annotations

import datetime as dt
from unittest import mock

import pytest
import requests

from tablebay_test.s3 import assert_absent, get_bytes, md5_etag, multipart_etag, pattern
from tablebay_test.s3raw import RawResponse, key_path


def _error_code(resp: requests.Response) -> str | None:
    return RawResponse(resp.status_code, dict(resp.headers), resp.content).error_code()


@pytest.fixture(scope="module")
def table(s3env):
    return s3env.new_table()


@pytest.fixture(scope="module")
def s3v4(s3env):
    """A boto3 client that presigns with SigV4 (`X-Amz-Signature`)."""
    return s3env.client(signature_version="s3v4")


def test_default_presign_is_sigv2(s3env, table):
    """At botocore's defaults the URL is SigV2 query auth, which the server refuses as S3 does (400
    InvalidRequest): presign with `signature_version="s3v4"`."""
    s3 = s3env.client()
    s3.put_object(Bucket=table.bucket, Key="pre/v2", Body=b"sigv2 body")
    url = s3.generate_presigned_url("get_object", Params={"Bucket": table.bucket, "Key": "pre/v2"})
    assert "Signature=" in url and "X-Amz-Signature" not in url, url
    resp = requests.get(url, timeout=60)
    assert (resp.status_code, _error_code(resp)) == (400, "InvalidRequest"), (resp.status_code, resp.text)
    assert b"sigv2 body" not in resp.content


def test_presigned_get_and_put(s3env, s3v4, table):
    s3 = s3v4
    data = pattern(123_456, seed=1)
    put_url = s3.generate_presigned_url("put_object", Params={"Bucket": table.bucket, "Key": "pre/obj"},
                                        ExpiresIn=300)
    assert "X-Amz-Signature=" in put_url
    resp = requests.put(put_url, data=data, timeout=60)
    assert resp.status_code == 200, resp.text
    assert resp.headers["ETag"] == md5_etag(data)

    get_url = s3.generate_presigned_url("get_object", Params={"Bucket": table.bucket, "Key": "pre/obj"},
                                        ExpiresIn=300)
    got = requests.get(get_url, timeout=60)
    assert got.status_code == 200 and got.content == data
    ranged = requests.get(get_url, headers={"Range": "bytes=10-19"}, timeout=60)
    assert ranged.status_code == 206 and ranged.content == data[10:20]
    head_url = s3.generate_presigned_url("head_object", Params={"Bucket": table.bucket, "Key": "pre/obj"})
    head = requests.head(head_url, timeout=60)
    assert head.status_code == 200 and int(head.headers["Content-Length"]) == len(data)


def test_presigned_put_with_content_type(s3env, s3v4, table):
    s3 = s3v4
    url = s3.generate_presigned_url("put_object", Params={"Bucket": table.bucket, "Key": "pre/typed",
                                                          "ContentType": "application/json"})
    resp = requests.put(url, data=b"{}", headers={"Content-Type": "application/json"}, timeout=60)
    assert resp.status_code == 200, resp.text
    assert s3.head_object(Bucket=table.bucket, Key="pre/typed")["ContentType"] == "application/json"


def test_expired_url_is_rejected(s3env, s3v4, table):
    s3 = s3v4
    s3.put_object(Bucket=table.bucket, Key="pre/old", Body=b"old")
    two_hours_ago = dt.datetime.now(dt.timezone.utc).replace(tzinfo=None) - dt.timedelta(hours=2)
    with mock.patch("botocore.auth.get_current_datetime", return_value=two_hours_ago):
        url = s3.generate_presigned_url("get_object", Params={"Bucket": table.bucket, "Key": "pre/old"},
                                        ExpiresIn=60)
        put_url = s3.generate_presigned_url("put_object", Params={"Bucket": table.bucket, "Key": "pre/late"},
                                            ExpiresIn=60)
    resp = requests.get(url, timeout=60)
    assert resp.status_code == 403 and _error_code(resp) == "AccessDenied", resp.text
    assert "expired" in resp.text.lower()
    resp = requests.put(put_url, data=b"late", timeout=60)
    assert resp.status_code == 403, resp.text
    assert_absent(s3, table.bucket, "pre/late")


def test_expiry_limits(s3env, table, raw_s3):
    """X-Amz-Expires is at most 7 days (604800 s)."""
    s3env.client().put_object(Bucket=table.bucket, Key="pre/limits", Body=b"x")
    path = key_path(table.bucket, "pre/limits")
    assert requests.get(raw_s3.presign("GET", path, expires=604800), timeout=60).status_code == 200
    too_long = requests.get(raw_s3.presign("GET", path, expires=604801), timeout=60)
    assert too_long.status_code in (400, 403) and _error_code(too_long) in ("AuthorizationQueryParametersError",
                                                                            "AccessDenied"), too_long.text
    # Signed in the future (clock skew beyond 15 minutes) is not valid yet.
    future = dt.datetime.now(dt.timezone.utc) + dt.timedelta(hours=1)
    early = requests.get(raw_s3.presign("GET", path, expires=60, at=future), timeout=60)
    assert early.status_code == 403, early.text


def test_tampered_url_is_rejected(s3env, s3v4, table):
    s3 = s3v4
    s3.put_object(Bucket=table.bucket, Key="pre/a", Body=b"a")
    s3.put_object(Bucket=table.bucket, Key="pre/b", Body=b"b")
    url = s3.generate_presigned_url("get_object", Params={"Bucket": table.bucket, "Key": "pre/a"})
    resp = requests.get(url.replace("/pre/a?", "/pre/b?"), timeout=60)
    assert resp.status_code == 403 and _error_code(resp) == "SignatureDoesNotMatch", resp.text
    # The method is signed too: a GET URL does not allow a PUT.
    resp = requests.put(url, data=b"overwrite", timeout=60)
    assert resp.status_code == 403, resp.text
    assert get_bytes(s3, table.bucket, "pre/a") == b"a"


def test_presigned_upload_part(s3env, s3v4, table):
    """Presigned UploadPart URLs, as browser and edge uploaders use them."""
    s3 = s3v4
    key = "pre/mpu"
    upload_id = s3.create_multipart_upload(Bucket=table.bucket, Key=key)["UploadId"]
    parts = [pattern(5 * 1024 * 1024, 5), b"end"]
    etags = []
    for n, data in enumerate(parts, start=1):
        url = s3.generate_presigned_url("upload_part", Params={"Bucket": table.bucket, "Key": key,
                                                               "UploadId": upload_id, "PartNumber": n})
        resp = requests.put(url, data=data, timeout=60)
        assert resp.status_code == 200, resp.text
        etags.append(resp.headers["ETag"])
    done = s3.complete_multipart_upload(Bucket=table.bucket, Key=key, UploadId=upload_id, MultipartUpload={
        "Parts": [{"PartNumber": n, "ETag": e} for n, e in enumerate(etags, start=1)]})
    assert done["ETag"] == multipart_etag(parts)
    assert get_bytes(s3, table.bucket, key) == b"".join(parts)


def test_hand_presigned_url(s3env, table, raw_s3):
    """A presigned URL built from the spec (RawS3.presign), not by botocore."""
    s3env.client().put_object(Bucket=table.bucket, Key="pre/hand", Body=b"by hand")
    url = raw_s3.presign("GET", key_path(table.bucket, "pre/hand"))
    assert requests.get(url, timeout=60).content == b"by hand"
