"""The S3 listener's refusals of issue 14 (findings 5 and 11), each with proof that nothing was stored.

- Signature Version 2, as botocore signs it (`HmacV1Auth` header, `HmacV1QueryAuth`/default presigned URLs):
  400 `InvalidRequest` "The authorization mechanism you have provided is not supported. Please use
  AWS4-HMAC-SHA256.", S3's answer in every region opened since 2014. V2 has no usable clock on the server (a
  request dated 2001 was accepted) and does not sign the body.
- An aws-chunked body that ends without its final zero-length chunk: 400 `IncompleteBody`, for PutObject and
  UploadPart.
"""

from __future__ import annotations

import re

import requests
from botocore.auth import HmacV1Auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials

from tablebay_test import ACCESS_KEY_ID, SECRET_ACCESS_KEY
from tablebay_test.s3 import assert_absent, get_bytes, pattern
from tablebay_test.s3raw import STREAMING_SIGNED, RawResponse, RawS3, key_path

UNSUPPORTED = "The authorization mechanism you have provided is not supported. Please use AWS4-HMAC-SHA256."
CREDENTIALS = Credentials(ACCESS_KEY_ID, SECRET_ACCESS_KEY)


class _DatedIn2001(HmacV1Auth):
    """SigV2 with a `Date` of 2001: a captured request replayed years later."""

    def _get_date(self):
        return "Mon, 01 Jan 2001 00:00:00 GMT"


def _send_v2(method: str, url: str, body: bytes = b"", auth: HmacV1Auth | None = None) -> requests.Response:
    """A request signed with SigV2 in the `Authorization: AWS <key>:<signature>` header."""
    request = AWSRequest(method=method, url=url, data=body, headers={"Content-Type": "application/octet-stream"})
    (auth or HmacV1Auth(CREDENTIALS)).add_auth(request)
    assert request.headers["Authorization"].startswith(f"AWS {ACCESS_KEY_ID}:")
    return requests.request(method, url, headers=dict(request.headers), data=body, timeout=60)


def _assert_unsupported(resp: requests.Response) -> None:
    raw = RawResponse(resp.status_code, dict(resp.headers), resp.content)
    assert (resp.status_code, raw.error_code()) == (400, "InvalidRequest"), (resp.status_code, resp.text)
    assert re.search(r"<Message>(.*?)</Message>", resp.text).group(1) == UNSUPPORTED, resp.text


def test_sigv2_header_requests_are_refused(s3env, s3table):
    s3 = s3env.client(signature_version="s3v4")
    s3.put_object(Bucket=s3table.bucket, Key="v2/kept", Body=b"the original")
    for auth in (HmacV1Auth(CREDENTIALS), _DatedIn2001(CREDENTIALS)):
        put = _send_v2("PUT", f"{s3env.s3_url}/{s3table.bucket}/v2/new", b"written with SigV2", auth)
        _assert_unsupported(put)
        assert_absent(s3, s3table.bucket, "v2/new")
        overwrite = _send_v2("PUT", f"{s3env.s3_url}/{s3table.bucket}/v2/kept", b"replayed body", auth)
        _assert_unsupported(overwrite)
        get = _send_v2("GET", f"{s3env.s3_url}/{s3table.bucket}/v2/kept", auth=auth)
        _assert_unsupported(get)
        assert b"the original" not in get.content
        delete = _send_v2("DELETE", f"{s3env.s3_url}/{s3table.bucket}/v2/kept", auth=auth)
        _assert_unsupported(delete)
    assert get_bytes(s3, s3table.bucket, "v2/kept") == b"the original"


def test_sigv2_presigned_urls_are_refused(s3env, s3table):
    """botocore presigns with SigV2 in us-east-1 unless told `signature_version="s3v4"`
    (docs/clients/s3-boto3.md): such URLs are refused, whatever their `Expires`."""
    v4 = s3env.client(signature_version="s3v4")
    v4.put_object(Bucket=s3table.bucket, Key="v2/secret", Body=b"not for v2 urls")
    default = s3env.client()
    put_url = default.generate_presigned_url("put_object", Params={"Bucket": s3table.bucket, "Key": "v2/pre"},
                                             ExpiresIn=60)
    assert "AWSAccessKeyId=" in put_url and "Signature=" in put_url and "X-Amz-" not in put_url, put_url
    _assert_unsupported(requests.put(put_url, data=b"via a v2 url", timeout=60))
    assert_absent(v4, s3table.bucket, "v2/pre")
    get_url = default.generate_presigned_url("get_object", Params={"Bucket": s3table.bucket, "Key": "v2/secret"},
                                             ExpiresIn=60)
    resp = requests.get(get_url, timeout=60)
    _assert_unsupported(resp)
    assert b"not for v2 urls" not in resp.content
    # Far past the 7-day cap of SigV4 URLs.
    forever = re.sub(r"Expires=\d+", "Expires=4102444800", get_url)
    _assert_unsupported(requests.get(forever, timeout=60))
    # A V2 query next to the V4 one is still V2 to the verifier: refused too.
    v4_url = v4.generate_presigned_url("get_object", Params={"Bucket": s3table.bucket, "Key": "v2/secret"})
    _assert_unsupported(requests.get(v4_url + "&AWSAccessKeyId=x&Signature=y", timeout=60))
    assert requests.get(v4_url, timeout=60).content == b"not for v2 urls"


class _WithoutFinalChunk(RawS3):
    """Sends `streaming_put`'s signed aws-chunked body without its final `0;chunk-signature=…` chunk (the body
    goes with Transfer-Encoding: chunked, so its length is not signed)."""

    FINAL = len("0;chunk-signature=") + 64 + 4

    def send(self, method, path, query=None, headers=None, body=b"", timeout=120):
        final = body[-self.FINAL:]
        assert final.startswith(b"0;chunk-signature=") and final.endswith(b"\r\n\r\n"), final
        return super().send(method, path, query, headers, body[:-self.FINAL], timeout)


def test_aws_chunked_without_the_final_chunk_is_incomplete(s3env, s3table):
    raw = _WithoutFinalChunk(s3env.s3_url)
    for size in (10, 150_000):   # one chunk; three 64 KiB chunks
        key = f"chunked/short-{size}"
        resp = raw.streaming_put(key_path(s3table.bucket, key), pattern(size, seed=size), STREAMING_SIGNED,
                                 http_chunked=True)
        assert (resp.status, resp.error_code()) == (400, "IncompleteBody"), (resp.status, resp.text)
        assert_absent(s3env.client(), s3table.bucket, key)
    # The same request with its final chunk is stored.
    complete = RawS3(s3env.s3_url).streaming_put(key_path(s3table.bucket, "chunked/complete"), b"0123456789",
                                                 STREAMING_SIGNED, http_chunked=True)
    assert complete.status == 200, complete.text
    assert get_bytes(s3env.client(), s3table.bucket, "chunked/complete") == b"0123456789"


def test_upload_part_without_the_final_chunk_is_incomplete(s3env, s3table):
    s3 = s3env.client()
    key = "chunked/multipart"
    upload_id = s3.create_multipart_upload(Bucket=s3table.bucket, Key=key)["UploadId"]
    resp = _WithoutFinalChunk(s3env.s3_url).streaming_put(
        key_path(s3table.bucket, key), pattern(100_000, seed=3), STREAMING_SIGNED, http_chunked=True,
        query={"partNumber": "1", "uploadId": upload_id})
    assert (resp.status, resp.error_code()) == (400, "IncompleteBody"), (resp.status, resp.text)
    assert s3.list_parts(Bucket=s3table.bucket, Key=key, UploadId=upload_id).get("Parts", []) == []
    s3.abort_multipart_upload(Bucket=s3table.bucket, Key=key, UploadId=upload_id)
