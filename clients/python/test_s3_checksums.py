"""Integrity on the data plane: each flexible checksum algorithm (CRC32, CRC32C, CRC64NVME, SHA1, SHA256)
in a header and in an aws-chunked trailer (botocore's own encoder, and hand-signed
`STREAMING-AWS4-HMAC-SHA256-PAYLOAD-TRAILER`), stored and returned by HEAD/GET with checksum mode;
Content-MD5; composite checksums of multipart uploads; every `x-amz-content-sha256` form; and a wrong
checksum or digest rejected with S3's error code, leaving no object."""

from __future__ import annotations

import base64
import hashlib

import pytest

from tablebay_test.s3 import (CHECKSUM_ALGORITHMS, MIB, assert_absent, checksum, composite_checksum,
                              content_md5, crt_signers, get_bytes, md5_etag, pattern, s3_error, wire_recorder)
from tablebay_test.s3raw import (STREAMING_SIGNED, STREAMING_SIGNED_TRAILER, STREAMING_UNSIGNED_TRAILER,
                                 UNSIGNED_PAYLOAD, RawS3, key_path)


@pytest.fixture(scope="module")
def table(s3env_both):
    return s3env_both.new_table()


@pytest.fixture(scope="module")
def raw(s3env_both):
    return RawS3(s3env_both.s3_url)


def _member(algorithm: str) -> str:
    return "Checksum" + algorithm.upper()


def _assert_stored(s3, bucket, key, data, algorithm):
    """HEAD and GET with `x-amz-checksum-mode: ENABLED` return the checksum; botocore validates it on GET."""
    want = checksum(algorithm, data)
    head = s3.head_object(Bucket=bucket, Key=key, ChecksumMode="ENABLED")
    assert head.get(_member(algorithm)) == want, head
    got = s3.get_object(Bucket=bucket, Key=key, ChecksumMode="ENABLED")
    assert got.get(_member(algorithm)) == want, got
    assert got["Body"].read() == data


@pytest.mark.parametrize("algorithm", CHECKSUM_ALGORITHMS)
@pytest.mark.parametrize("location", ["header", "trailer"])
def test_each_algorithm(s3env_both, table, algorithm, location):
    s3 = s3env_both.client("trailer" if location == "trailer" else "default")
    seen = wire_recorder(s3)
    key = f"sum/{location}/{algorithm}"
    data = pattern(2 * MIB + 3, seed=len(algorithm))
    put = s3.put_object(Bucket=table.bucket, Key=key, Body=data, ChecksumAlgorithm=algorithm)
    sent = seen[-1]
    name = f"x-amz-checksum-{algorithm.lower()}"
    if location == "trailer":
        assert sent.get("x-amz-trailer") == name and sent["x-amz-content-sha256"] == STREAMING_UNSIGNED_TRAILER
    else:
        assert sent.get(name) == checksum(algorithm, data), sent
    assert put.get(_member(algorithm)) == checksum(algorithm, data), put
    assert put["ETag"] == md5_etag(data)
    _assert_stored(s3, table.bucket, key, data, algorithm)


@pytest.mark.parametrize("algorithm", CHECKSUM_ALGORITHMS)
@pytest.mark.parametrize("form", [STREAMING_SIGNED_TRAILER, STREAMING_UNSIGNED_TRAILER])
def test_each_algorithm_in_a_hand_built_trailer(s3env_both, table, raw, algorithm, form):
    key = f"sum/raw/{form}/{algorithm}"
    data = pattern(300_001, seed=3)
    resp = raw.streaming_put(key_path(table.bucket, key), data, form, algorithm=algorithm, chunk_size=65536)
    assert resp.status == 200, (resp.status, resp.text)
    assert resp.headers.get("etag") == md5_etag(data)
    _assert_stored(s3env_both.client(), table.bucket, key, data, algorithm)


@pytest.mark.parametrize("location", ["header", "trailer"])
@pytest.mark.parametrize("algorithm", CHECKSUM_ALGORITHMS)
def test_wrong_checksum_is_bad_digest_and_leaves_nothing(s3env_both, table, raw, algorithm, location):
    key = f"sum/wrong/{location}/{algorithm}"
    data = pattern(100_000, seed=5)
    s3 = s3env_both.client()
    if location == "header":
        with s3_error(("BadDigest", "XAmzContentChecksumMismatch"), 400):
            s3.put_object(Bucket=table.bucket, Key=key, Body=data,
                          **{_member(algorithm): checksum(algorithm, data + b"!")})
    else:
        resp = raw.streaming_put(key_path(table.bucket, key), data, STREAMING_UNSIGNED_TRAILER,
                                 algorithm=algorithm, wrong_checksum=True)
        assert resp.status == 400 and resp.error_code() in ("BadDigest", "XAmzContentChecksumMismatch"), (
            resp.status, resp.text)
    assert_absent(s3, table.bucket, key)


def test_wrong_checksum_does_not_replace_an_existing_object(s3env_both, table):
    s3 = s3env_both.client()
    s3.put_object(Bucket=table.bucket, Key="sum/keep", Body=b"the good version")
    with s3_error(("BadDigest", "XAmzContentChecksumMismatch"), 400):
        s3.put_object(Bucket=table.bucket, Key="sum/keep", Body=b"a corrupted version",
                      ChecksumSHA256=checksum("SHA256", b"something else"))
    assert get_bytes(s3, table.bucket, "sum/keep") == b"the good version"


def test_content_md5(s3env_both, table):
    s3 = s3env_both.client("when_required")
    data = pattern(70_000, seed=9)
    put = s3.put_object(Bucket=table.bucket, Key="md5/ok", Body=data, ContentMD5=content_md5(data))
    assert put["ETag"] == md5_etag(data)
    assert get_bytes(s3, table.bucket, "md5/ok") == data
    with s3_error("BadDigest", 400):
        s3.put_object(Bucket=table.bucket, Key="md5/wrong", Body=data, ContentMD5=content_md5(data + b"x"))
    assert_absent(s3, table.bucket, "md5/wrong")
    with s3_error("InvalidDigest", 400):
        s3.put_object(Bucket=table.bucket, Key="md5/garbage", Body=data, ContentMD5="not-an-md5")
    assert_absent(s3, table.bucket, "md5/garbage")


def test_content_md5_on_upload_part(s3env_both, table):
    s3 = s3env_both.client("when_required")
    key = "md5/part"
    upload_id = s3.create_multipart_upload(Bucket=table.bucket, Key=key)["UploadId"]
    with s3_error("BadDigest", 400):
        s3.upload_part(Bucket=table.bucket, Key=key, UploadId=upload_id, PartNumber=1, Body=b"abc",
                       ContentMD5=content_md5(b"abd"))
    assert s3.list_parts(Bucket=table.bucket, Key=key, UploadId=upload_id).get("Parts", []) == []
    s3.abort_multipart_upload(Bucket=table.bucket, Key=key, UploadId=upload_id)


@pytest.mark.parametrize("algorithm", ["CRC32", "CRC32C", "SHA1", "SHA256"])
def test_multipart_composite_checksum(s3env_both, table, algorithm):
    s3 = s3env_both.client()
    key = f"sum/mpu/{algorithm}"
    parts = [pattern(5 * MIB, 61), pattern(5 * MIB, 62), b"last part"]
    upload_id = s3.create_multipart_upload(Bucket=table.bucket, Key=key, ChecksumAlgorithm=algorithm,
                                           ChecksumType="COMPOSITE")["UploadId"]
    completed = []
    for n in (3, 1, 2):
        resp = s3.upload_part(Bucket=table.bucket, Key=key, UploadId=upload_id, PartNumber=n, Body=parts[n - 1],
                              ChecksumAlgorithm=algorithm)
        assert resp.get(_member(algorithm)) == checksum(algorithm, parts[n - 1]), resp
        completed.append({"PartNumber": n, "ETag": resp["ETag"], _member(algorithm): resp[_member(algorithm)]})
    listed = s3.list_parts(Bucket=table.bucket, Key=key, UploadId=upload_id)
    assert [p.get(_member(algorithm)) for p in listed["Parts"]] == [checksum(algorithm, p) for p in parts]
    completed.sort(key=lambda p: p["PartNumber"])
    done = s3.complete_multipart_upload(Bucket=table.bucket, Key=key, UploadId=upload_id,
                                        MultipartUpload={"Parts": completed})
    want = composite_checksum(algorithm, parts)
    assert done.get(_member(algorithm)) == want, done
    head = s3.head_object(Bucket=table.bucket, Key=key, ChecksumMode="ENABLED")
    assert head.get(_member(algorithm)) == want, head
    assert get_bytes(s3, table.bucket, key) == b"".join(parts)


def test_multipart_part_checksum_mismatch_in_complete(s3env_both, table):
    s3 = s3env_both.client()
    key = "sum/mpu/mismatch"
    upload_id = s3.create_multipart_upload(Bucket=table.bucket, Key=key, ChecksumAlgorithm="SHA256")["UploadId"]
    resp = s3.upload_part(Bucket=table.bucket, Key=key, UploadId=upload_id, PartNumber=1, Body=b"only part",
                          ChecksumAlgorithm="SHA256")
    with s3_error(("InvalidPart", "BadDigest"), 400):
        s3.complete_multipart_upload(Bucket=table.bucket, Key=key, UploadId=upload_id, MultipartUpload={"Parts": [
            {"PartNumber": 1, "ETag": resp["ETag"], "ChecksumSHA256": checksum("SHA256", b"other")}]})
    assert_absent(s3, table.bucket, key)
    s3.abort_multipart_upload(Bucket=table.bucket, Key=key, UploadId=upload_id)


# --- every x-amz-content-sha256 form, hand-signed ---

@pytest.mark.parametrize("form", ["hex", UNSIGNED_PAYLOAD, STREAMING_SIGNED, STREAMING_SIGNED_TRAILER,
                                  STREAMING_UNSIGNED_TRAILER])
@pytest.mark.parametrize("size", [0, 1, 65536, 1_000_003])
def test_every_payload_form(s3env_both, table, raw, form, size):
    key = f"forms/{form}/{size}"
    data = pattern(size, seed=size + 1)
    path = key_path(table.bucket, key)
    if form == "hex":
        resp = raw.request("PUT", path, body=data)
    elif form == UNSIGNED_PAYLOAD:
        resp = raw.request("PUT", path, body=data, payload_hash=UNSIGNED_PAYLOAD)
    else:
        resp = raw.streaming_put(path, data, form, chunk_size=65536)
    assert resp.status == 200, (resp.status, resp.text)
    assert resp.headers.get("etag") == md5_etag(data)
    assert get_bytes(s3env_both.client(), table.bucket, key) == data


@pytest.mark.parametrize("form", [STREAMING_SIGNED_TRAILER, STREAMING_UNSIGNED_TRAILER])
def test_streaming_with_http_chunked_transfer(s3env_both, table, raw, form):
    """botocore sends aws-chunked inside `Transfer-Encoding: chunked` with no Content-Length."""
    key = f"forms/te-chunked/{form}"
    data = pattern(200_000, seed=77)
    resp = raw.streaming_put(key_path(table.bucket, key), data, form, http_chunked=True)
    assert resp.status == 200, (resp.status, resp.text)
    assert get_bytes(s3env_both.client(), table.bucket, key) == data


def test_wrong_payload_hash_is_rejected(s3env_both, table, raw):
    key = "forms/wrong-hash"
    resp = raw.request("PUT", key_path(table.bucket, key), body=b"actual body",
                       payload_hash=hashlib.sha256(b"another body").hexdigest())
    assert resp.status == 400 and resp.error_code() == "XAmzContentSHA256Mismatch", (resp.status, resp.text)
    assert_absent(s3env_both.client(), table.bucket, key)


@pytest.mark.parametrize("form", [STREAMING_SIGNED, STREAMING_SIGNED_TRAILER])
@pytest.mark.parametrize("bad_chunk", [0, 2, "final"])
def test_bad_chunk_signature_is_rejected(s3env_both, table, raw, form, bad_chunk):
    key = f"forms/bad-chunk/{form}/{bad_chunk}"
    data = pattern(200_000, seed=8)  # chunks 0..3 of 64 KiB, then the final empty chunk (4)
    index = 4 if bad_chunk == "final" else bad_chunk
    resp = raw.streaming_put(key_path(table.bucket, key), data, form, bad_chunk=index)
    assert resp.status == 403 and resp.error_code() == "SignatureDoesNotMatch", (resp.status, resp.text)
    assert_absent(s3env_both.client(), table.bucket, key)


def test_bad_trailer_signature_is_rejected(s3env_both, table, raw):
    key = "forms/bad-trailer-signature"
    resp = raw.streaming_put(key_path(table.bucket, key), pattern(1000), STREAMING_SIGNED_TRAILER,
                             bad_trailer_signature=True)
    assert resp.status == 403 and resp.error_code() == "SignatureDoesNotMatch", (resp.status, resp.text)
    assert_absent(s3env_both.client(), table.bucket, key)


@pytest.mark.parametrize("declared", [-5, +5])
def test_decoded_length_mismatch_is_rejected(s3env_both, table, raw, declared):
    """`x-amz-decoded-content-length` must be what the chunks decode to, shorter or longer."""
    key = f"forms/length{declared:+d}"
    data = pattern(10_000)
    for form in (STREAMING_UNSIGNED_TRAILER, STREAMING_SIGNED):
        resp = raw.streaming_put(key_path(table.bucket, key), data, form,
                                 headers={"x-amz-decoded-content-length": str(len(data) + declared)})
        assert 400 <= resp.status < 500, (form, resp.status, resp.text)
        assert_absent(s3env_both.client(), table.bucket, key)


def test_crt_signer(s3env_both, table):
    """boto3 with `boto3[crt]` installed signs with awscrt: the same operations work."""
    from tablebay_test.s3 import make_s3_client

    with crt_signers():
        s3 = make_s3_client(s3env_both.s3_url, signature_version="s3v4")
        data = pattern(1_500_000, seed=12)
        s3.put_object(Bucket=table.bucket, Key="crt/one", Body=data, ChecksumAlgorithm="CRC32C")
        assert get_bytes(s3, table.bucket, "crt/one") == data
        assert [o["Key"] for o in s3.list_objects_v2(Bucket=table.bucket, Prefix="crt/")["Contents"]] == ["crt/one"]
        url = s3.generate_presigned_url("get_object", Params={"Bucket": table.bucket, "Key": "crt/one"})
    import requests
    assert requests.get(url, timeout=60).content == data


def test_checksum_header_base64_is_validated(s3env_both, table):
    s3 = s3env_both.client()
    with s3_error(("InvalidRequest", "InvalidArgument", "BadDigest"), 400):
        s3.put_object(Bucket=table.bucket, Key="sum/malformed", Body=b"abc", ChecksumCRC32="***")
    assert_absent(s3, table.bucket, "sum/malformed")


def test_expectation_helpers():
    """Self-check of the expectation helpers against hashlib and a published CRC value."""
    assert checksum("SHA256", b"abc") == base64.b64encode(hashlib.sha256(b"abc").digest()).decode()
    assert checksum("CRC32", b"123456789") == base64.b64encode(bytes.fromhex("cbf43926")).decode()
    assert checksum("CRC32C", b"123456789") == base64.b64encode(bytes.fromhex("e3069283")).decode()
    assert checksum("CRC64NVME", b"123456789") == base64.b64encode(bytes.fromhex("ae8b14860a799888")).decode()


def test_raw_signer_matches_the_aws_streaming_example():
    """RawS3's seed and chunk signatures reproduce the worked example of
    https://docs.aws.amazon.com/AmazonS3/latest/API/sigv4-streaming.html (66560 bytes of `a`)."""
    import datetime as dt

    from tablebay_test.s3raw import EMPTY_SHA256

    r = RawS3("http://s3.amazonaws.com:80", access_key="AKIAIOSFODNN7EXAMPLE",
              secret_key="wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY")
    r.netloc = "s3.amazonaws.com"
    _, seed, amz_date, scope = r.sign_headers(
        "PUT", "/examplebucket/chunkObject.txt", None,
        {"x-amz-storage-class": "REDUCED_REDUNDANCY", "content-encoding": "aws-chunked",
         "x-amz-decoded-content-length": "66560", "content-length": "66824"},
        STREAMING_SIGNED, dt.datetime(2013, 5, 24, tzinfo=dt.timezone.utc))
    assert seed == "4f232c4386841ef735655705268965c44a0e4690baa4adea153f7db9fa80a0a9"
    previous, chained = seed, []
    for chunk in (b"a" * 65536, b"a" * 1024, b""):
        sts = "\n".join(["AWS4-HMAC-SHA256-PAYLOAD", amz_date, scope, previous, EMPTY_SHA256,
                         hashlib.sha256(chunk).hexdigest()])
        previous = r._signature(amz_date[:8], sts)
        chained.append(previous)
    assert chained == ["ad80c730a21e5b8d04586a2213dd63b9a0e99e0e2307b0ade35a65485a288648",
                       "0055627c9e194cb4542bae2aa5492e3c1575bbb81b612b7d234b86a503ef5497",
                       "b6c6ea8a5354eaf15b3cb7646744f4275b71ea724fed81ceb9323e279d449df9"]
