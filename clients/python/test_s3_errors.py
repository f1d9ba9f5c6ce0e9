"""Errors and isolation on the data plane: S3's XML error format with a request id, wrong signature
(SignatureDoesNotMatch), unknown access key (InvalidAccessKeyId), unsigned requests, clock skew, unknown
buckets (NoSuchBucket, including a well-formed `<uuid>--table-s3` of no table), keys that try to leave
their table through `..` (plain and percent-encoded), and virtual-host-style addressing."""

from __future__ import annotations

import datetime as dt
import uuid
import xml.etree.ElementTree as ET

import pytest

from tablebay_test.s3 import assert_absent, get_bytes, make_s3_client, s3_error
from tablebay_test.s3raw import RawS3, key_path


@pytest.fixture(scope="module")
def tables2(s3env):
    """Two tables: `a` with `secret.txt`, and `b` with its own `secret.txt`."""
    s3 = s3env.client()
    a, b = s3env.new_table(), s3env.new_table()
    s3.put_object(Bucket=a.bucket, Key="secret.txt", Body=b"A's secret")
    s3.put_object(Bucket=b.bucket, Key="secret.txt", Body=b"B's secret")
    s3.put_object(Bucket=b.bucket, Key="data/file.parquet", Body=b"B's data")
    return a, b


def _xml_error(resp) -> dict[str, str]:
    assert resp.headers.get("content-type", "").startswith(("application/xml", "text/xml")), resp.headers
    root = ET.fromstring(resp.body)
    assert root.tag == "Error", resp.text
    return {child.tag: child.text or "" for child in root}


def test_error_format_and_request_id(s3env, tables2, raw_s3):
    a, _ = tables2
    resp = raw_s3.request("GET", key_path(a.bucket, "no/such/key"))
    assert resp.status == 404
    err = _xml_error(resp)
    assert err["Code"] == "NoSuchKey"
    assert err.get("Message")
    assert err.get("RequestId")
    assert resp.headers.get("x-amz-request-id"), resp.headers
    # Every answer carries a request id, successes too.
    ok = raw_s3.request("GET", key_path(a.bucket, "secret.txt"))
    assert ok.status == 200 and ok.headers.get("x-amz-request-id")


def test_wrong_secret_is_signature_does_not_match(s3env, tables2):
    a, _ = tables2
    bad = make_s3_client(s3env.s3_url, secret_key="not-the-secret")
    with s3_error("SignatureDoesNotMatch", 403):
        bad.get_object(Bucket=a.bucket, Key="secret.txt")
    with s3_error("SignatureDoesNotMatch", 403):
        bad.put_object(Bucket=a.bucket, Key="written-with-a-bad-signature", Body=b"x")
    assert_absent(s3env.client(), a.bucket, "written-with-a-bad-signature")


def test_unknown_access_key(s3env, tables2):
    a, _ = tables2
    stranger = make_s3_client(s3env.s3_url, access_key="AKIDNOSUCHKEY0000000", secret_key="whatever")
    with s3_error("InvalidAccessKeyId", 403):
        stranger.list_objects_v2(Bucket=a.bucket)


def test_tampered_request(s3env, tables2, raw_s3):
    a, _ = tables2

    def swap_key(headers, body):
        return headers, b"tampered!!"  # same length, other bytes: the signed payload hash no longer matches

    resp = raw_s3.request("PUT", key_path(a.bucket, "tampered"), body=b"original!!", tamper=swap_key)
    assert resp.status in (400, 403) and resp.error_code() in ("XAmzContentSHA256Mismatch", "SignatureDoesNotMatch",
                                                               "BadDigest"), resp.text

    def other_date(headers, body):
        headers["x-amz-date"] = (dt.datetime.now(dt.timezone.utc) - dt.timedelta(minutes=1)).strftime("%Y%m%dT%H%M%SZ")
        return headers, body

    resp = raw_s3.request("PUT", key_path(a.bucket, "tampered"), body=b"x", tamper=other_date)
    assert resp.status == 403 and resp.error_code() == "SignatureDoesNotMatch", resp.text
    assert_absent(s3env.client(), a.bucket, "tampered")


def test_unsigned_request_is_denied(s3env, tables2, raw_s3):
    a, _ = tables2
    resp = raw_s3.send("GET", key_path(a.bucket, "secret.txt"))
    assert resp.status == 403 and resp.error_code() == "AccessDenied", resp.text
    resp = raw_s3.send("PUT", key_path(a.bucket, "anonymous"), body=b"x")
    assert resp.status == 403
    assert_absent(s3env.client(), a.bucket, "anonymous")


def test_clock_skew(s3env, tables2, raw_s3):
    a, _ = tables2
    skewed = dt.datetime.now(dt.timezone.utc) - dt.timedelta(hours=1)
    resp = raw_s3.request("GET", key_path(a.bucket, "secret.txt"), at=skewed)
    assert resp.status == 403 and resp.error_code() == "RequestTimeTooSkewed", resp.text


def test_signed_for_another_region(s3env, tables2):
    """S3 answers AuthorizationHeaderMalformed when the credential scope names another region."""
    a, _ = tables2
    wrong_region = RawS3(s3env.s3_url, region="eu-west-1")
    resp = wrong_region.request("GET", key_path(a.bucket, "secret.txt"))
    assert resp.status in (400, 403), resp.text
    assert resp.error_code() in ("AuthorizationHeaderMalformed", "SignatureDoesNotMatch", "AccessDenied"), resp.text


def test_signed_for_another_service(s3env, tables2):
    """A signature scoped to `s3tables` (the control plane's service) is not valid on the S3 listener."""
    a, _ = tables2
    resp = RawS3(s3env.s3_url, service="s3tables").request("GET", key_path(a.bucket, "secret.txt"))
    assert resp.status in (400, 403) and resp.body != b"A's secret", (resp.status, resp.text)
    assert resp.error_code() in ("AuthorizationHeaderMalformed", "SignatureDoesNotMatch", "AccessDenied"), resp.text


@pytest.mark.parametrize("bucket", [
    "not-a-table-bucket", "my-bucket", f"{uuid.uuid4()}--table-s3", f"{uuid.uuid4()}",
])
def test_unknown_bucket_is_no_such_bucket(s3env, bucket):
    s3 = s3env.client()
    with s3_error("NoSuchBucket", 404):
        s3.list_objects_v2(Bucket=bucket)
    with s3_error("NoSuchBucket", 404):
        s3.put_object(Bucket=bucket, Key="k", Body=b"x")
    with s3_error("NoSuchBucket", 404):
        s3.get_object(Bucket=bucket, Key="k")
    with s3_error(("NoSuchBucket", "404"), 404):
        s3.head_bucket(Bucket=bucket)


def test_table_bucket_exists_for_head_bucket(s3env, tables2):
    a, _ = tables2
    assert s3env.client().head_bucket(Bucket=a.bucket)["ResponseMetadata"]["HTTPStatusCode"] == 200


def test_deleted_table_bucket_is_gone(s3env):
    s3 = s3env.client()
    t = s3env.new_table()
    s3.put_object(Bucket=t.bucket, Key="x", Body=b"x")
    s3env.tables.delete_table(tableBucketARN=s3env.bucket_arn, namespace=t.namespace, name=t.name)
    with s3_error("NoSuchBucket", 404):
        s3.get_object(Bucket=t.bucket, Key="x")


def test_bucket_operations_are_not_table_operations(s3env):
    """Buckets are tables: CreateBucket/DeleteBucket of the storage bucket are not how tables are made."""
    s3 = s3env.client()
    name = f"{uuid.uuid4()}--table-s3"
    with pytest.raises(Exception):
        s3.create_bucket(Bucket=name)
    with s3_error("NoSuchBucket", 404):
        s3.list_objects_v2(Bucket=name)


# --- keys cannot leave their table ---

TRAVERSALS = [
    "../{other}/secret.txt",
    "../../{other}/secret.txt",
    "x/../../{other}/secret.txt",
    "./../{other}/secret.txt",
    "..\\{other}\\secret.txt",
]


@pytest.mark.parametrize("template", TRAVERSALS)
def test_dotdot_keys_through_boto3_stay_in_their_table(s3env, tables2, template):
    """A key with `..` is only a name: writing it in A never reaches B, reading it never returns B's bytes."""
    a, b = tables2
    s3 = s3env.client()
    key = template.format(other=b.bucket)
    try:
        s3.put_object(Bucket=a.bucket, Key=key, Body=b"written through A")
        stored = True
    except Exception:  # refusing such a key is also fine
        stored = False
    assert get_bytes(s3, b.bucket, "secret.txt") == b"B's secret"
    if stored:
        assert get_bytes(s3, a.bucket, key) == b"written through A"
        s3.delete_object(Bucket=a.bucket, Key=key)
    assert get_bytes(s3, b.bucket, "secret.txt") == b"B's secret"


@pytest.mark.parametrize("raw_key", [
    "../{other}/secret.txt",
    "%2E%2E/{other}/secret.txt",
    "%2e%2e%2f{other}%2fsecret.txt",
    "..%2F{other}%2Fsecret.txt",
    "..%5C{other}%5Csecret.txt",
    "data/..%2F..%2F{other}%2Fsecret.txt",
    "../../meta.db",
    "../../../../../../etc/passwd",
    "%2E%2E%2F%2E%2E%2Fmeta.db",
    "..%2F..%2F..%2Ftablebay.log",
])
def test_dotdot_paths_on_the_wire_do_not_escape(s3env, tables2, raw_s3, raw_key):
    """Paths sent byte for byte (no client normalises `..` away): reading never returns another table's
    bytes, the metadata database, or files outside the data dir; writing never lands outside the table."""
    a, b = tables2
    path = f"/{a.bucket}/" + raw_key.format(other=b.bucket)
    got = raw_s3.request("GET", path)
    forbidden = [b"B's secret", b"SQLite format 3", b"root:x:0:0", b"listener ready"]
    assert not any(f in got.body for f in forbidden), (got.status, got.body[:200])
    if got.status == 200:  # only possible when A holds an object with exactly that key
        assert got.body == b"written through A"
    else:
        assert got.status in (400, 403, 404), (got.status, got.text)

    put = raw_s3.request("PUT", path, body=b"attempted escape")
    assert put.status in (200, 400, 403, 404), (put.status, put.text)
    s3 = s3env.client()
    assert get_bytes(s3, b.bucket, "secret.txt") == b"B's secret"
    meta_db = s3env.server.data_dir / "meta.db"
    if meta_db.exists():
        assert meta_db.read_bytes()[:15] == b"SQLite format 3"
    outside = [p for p in s3env.server.data_dir.parent.rglob("*") if p.is_file()
               and p.stat().st_size == len(b"attempted escape") and p.read_bytes() == b"attempted escape"
               and (s3env.server.data_dir / "blobs") not in p.parents]
    assert outside == [], f"an escaped write landed outside the blob store: {outside}"
    if put.status == 200:
        raw_s3.request("DELETE", path)


def test_listing_of_b_never_shows_a(s3env, tables2):
    a, b = tables2
    keys = [o["Key"] for o in s3env.client().list_objects_v2(Bucket=b.bucket)["Contents"]]
    assert "secret.txt" in keys and all(not k.startswith("..") for k in keys)
    assert get_bytes(s3env.client(), a.bucket, "secret.txt") == b"A's secret"


# --- connection reuse after an early error ---

def test_errors_before_the_body_keep_the_connection_usable(s3env, tables2):
    """boto3 sends PutObject/UploadPart with `Expect: 100-continue` and, when the answer is a final error,
    does not send the body and reuses the connection. The server must then close the connection or not
    expect the body; reading the next request's first bytes as the old body turns it into garbage
    (`method=ELETE` in the log, SignatureDoesNotMatch to the client)."""
    a, _ = tables2
    s3 = s3env.client()
    wrong = []
    for i in range(100):
        with s3_error("NoSuchUpload", 404):
            s3.upload_part(Bucket=a.bucket, Key="early", UploadId="no-such-upload", PartNumber=1, Body=b"x")
        try:
            s3.abort_multipart_upload(Bucket=a.bucket, Key="early", UploadId="no-such-upload")
        except s3.exceptions.NoSuchUpload:
            continue
        except Exception as e:  # noqa: BLE001
            wrong.append((i, repr(e)[:200]))
    assert wrong == [], f"{len(wrong)} of 100 requests after an early error were misread: {wrong[:3]}"


def test_expect_continue_without_body(s3env, tables2, raw_s3):
    """A client that got a final answer to `Expect: 100-continue` and sends no body: the next request on
    the same connection is either answered correctly or the server has closed the connection."""
    import socket

    from tablebay_test.s3raw import _encode_query

    a, _ = tables2
    path, query = key_path(a.bucket, "early2"), {"partNumber": "1", "uploadId": "no-such-upload"}
    headers, *_ = raw_s3.sign_headers("PUT", path, query, {"content-length": "10", "expect": "100-continue"},
                                      "UNSIGNED-PAYLOAD")
    get_headers, *_ = raw_s3.sign_headers("GET", key_path(a.bucket, "secret.txt"), None, {}, hashlib_empty())
    with socket.create_connection((raw_s3.host, raw_s3.port), timeout=30) as sock:
        sock.sendall((f"PUT {path}?{_encode_query(query)} HTTP/1.1\r\n"
                      + "".join(f"{k}: {v}\r\n" for k, v in headers.items()) + "\r\n").encode())
        first = _read_http_response(sock)
        assert first and first[0] == 404, first
        try:
            sock.sendall((f"GET {key_path(a.bucket, 'secret.txt')} HTTP/1.1\r\n"
                          + "".join(f"{k}: {v}\r\n" for k, v in get_headers.items()) + "\r\n").encode())
            second = _read_http_response(sock)
        except OSError:
            second = None
    assert second is None or (second[0] == 200 and second[1] == b"A's secret"), second


def hashlib_empty() -> str:
    import hashlib

    return hashlib.sha256(b"").hexdigest()


def _read_http_response(sock) -> tuple[int, bytes] | None:
    """(status, body) of one HTTP/1.1 response with a Content-Length, or None if the peer closed first."""
    import re

    buf = b""
    while b"\r\n\r\n" not in buf:
        chunk = sock.recv(65536)
        if not chunk:
            return None
        buf += chunk
    head, rest = buf.split(b"\r\n\r\n", 1)
    status = int(head.split()[1])
    if status == 100:  # an interim answer: the final one follows
        return _read_http_response_rest(sock, rest)
    m = re.search(rb"(?i)\r\ncontent-length: *(\d+)", head)
    want = int(m.group(1)) if m else 0
    while len(rest) < want:
        chunk = sock.recv(65536)
        if not chunk:
            break
        rest += chunk
    return status, rest[:want]


def _read_http_response_rest(sock, already: bytes):
    class Prefixed:
        def __init__(self):
            self.buf = already

        def recv(self, n):
            if self.buf:
                out, self.buf = self.buf, b""
                return out
            return sock.recv(n)

    return _read_http_response(Prefixed())


# --- addressing ---

def test_virtual_host_style(s3env, tables2, raw_s3):
    """`Host: <bucket>.<endpoint host>` addressing reaches the same object as path style."""
    a, _ = tables2
    host = f"{a.bucket}.localhost:{raw_s3.port}"
    resp = raw_s3.request("GET", "/secret.txt", headers={"host": host})
    assert resp.status == 200 and resp.body == b"A's secret", (resp.status, resp.text)


def test_small_gets_on_a_kept_alive_connection_are_not_delayed(s3env, tables2, raw_s3):
    """A GET of a small object on a reused connection must not wait for the client's delayed ACK: the
    response head and a small body written as two segments without TCP_NODELAY stall up to ~40 ms each
    (Nagle's algorithm), and small GETs are what Iceberg metadata and manifest reads are. 40 GETs of
    100 B – 16 KiB objects take a few ms each; the bound on their median allows 10x that."""
    import http.client
    import time

    a, _ = tables2
    sizes = [100, 1000, 4096, 16384]
    for size in sizes:
        s3env.client().put_object(Bucket=a.bucket, Key=f"small-{size}", Body=b"s" * size)
    conn = http.client.HTTPConnection(raw_s3.host, raw_s3.port, timeout=30)
    timings = []
    try:
        for i in range(41):
            size = sizes[i % len(sizes)]
            path = key_path(a.bucket, f"small-{size}")
            headers, *_ = raw_s3.sign_headers("GET", path, None, {}, "UNSIGNED-PAYLOAD")
            headers.pop("host")
            start = time.perf_counter()
            conn.request("GET", path, headers=headers)
            resp = conn.getresponse()
            assert resp.status == 200 and len(resp.read()) == size
            if i:  # the first request opened the connection
                timings.append((time.perf_counter() - start, size))
    finally:
        conn.close()
    median = sorted(t for t, _ in timings)[len(timings) // 2]
    slow = sorted({size for t, size in timings if t > 0.02})
    assert median < 0.02, (f"median small GET on a kept-alive connection took {median * 1000:.1f} ms; slow sizes "
                           f"{slow} (Nagle + delayed ACK: the server should set TCP_NODELAY)")
