"""Raw S3 requests with a SigV4 signer written out from the spec, for what boto3 does not send.

boto3 never sends `STREAMING-AWS4-HMAC-SHA256-PAYLOAD` (signed aws-chunked, what the Java SDK and the AWS
CLI v2 send over http) nor its `-TRAILER` form, cannot send a wrong checksum in a trailer or a bad chunk
signature, and urllib3 removes `..` segments from paths. This module sends requests with `http.client`,
byte for byte as built here.

Signing (https://docs.aws.amazon.com/AmazonS3/latest/API/sig-v4-header-based-auth.html): the canonical
URI is the path exactly as sent (S3 does not normalise or double-encode it); the query is sorted and
RFC 3986-encoded; every header given is signed. Chunk signatures
(https://docs.aws.amazon.com/AmazonS3/latest/API/sigv4-streaming.html) chain from the seed signature:
`AWS4-HMAC-SHA256-PAYLOAD\\n<date>\\n<scope>\\n<previous>\\n<sha256("")>\\n<sha256(chunk)>`, and the trailer's
`AWS4-HMAC-SHA256-TRAILER\\n<date>\\n<scope>\\n<previous>\\n<sha256("name:value\\n")>`.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import hmac
import http.client
from dataclasses import dataclass
from urllib.parse import quote, urlsplit

from . import ACCESS_KEY_ID, REGION, SECRET_ACCESS_KEY
from .s3 import checksum

EMPTY_SHA256 = hashlib.sha256(b"").hexdigest()
UNSIGNED_PAYLOAD = "UNSIGNED-PAYLOAD"
STREAMING_SIGNED = "STREAMING-AWS4-HMAC-SHA256-PAYLOAD"
STREAMING_SIGNED_TRAILER = "STREAMING-AWS4-HMAC-SHA256-PAYLOAD-TRAILER"
STREAMING_UNSIGNED_TRAILER = "STREAMING-UNSIGNED-PAYLOAD-TRAILER"


@dataclass
class RawResponse:
    status: int
    headers: dict[str, str]
    body: bytes

    @property
    def text(self) -> str:
        return self.body.decode("utf-8", "replace")

    def error_code(self) -> str | None:
        """The `<Code>` of an S3 XML error body, if there is one."""
        import xml.etree.ElementTree as ET

        try:
            root = ET.fromstring(self.body)
        except ET.ParseError:
            return None
        for el in root.iter():
            if el.tag.split("}")[-1] == "Code":
                return el.text
        return None


def key_path(bucket: str, key: str) -> str:
    """`/<bucket>/<key>` encoded as boto3 encodes it (everything but unreserved characters and `/`)."""
    return "/" + bucket + "/" + quote(key, safe="/~")


def _hmac(key: bytes, msg: str) -> bytes:
    return hmac.new(key, msg.encode(), hashlib.sha256).digest()


def _encode_query(query) -> str:
    items = list(query.items()) if isinstance(query, dict) else list(query or [])
    encoded = sorted((quote(str(k), safe="-_.~"), quote(str(v), safe="-_.~")) for k, v in items)
    return "&".join(f"{k}={v}" for k, v in encoded)


class RawS3:
    """Signed requests to one S3 listener (`base_url` = `http://127.0.0.1:PORT`)."""

    def __init__(self, base_url: str, access_key: str = ACCESS_KEY_ID, secret_key: str = SECRET_ACCESS_KEY,
                 region: str = REGION, service: str = "s3"):
        self.service = service
        self.base_url = base_url.rstrip("/")
        parts = urlsplit(self.base_url)
        self.host = parts.hostname
        self.port = parts.port
        self.netloc = parts.netloc
        self.access_key = access_key
        self.secret_key = secret_key
        self.region = region

    # --- signing ---

    def _scope(self, when: dt.datetime) -> tuple[str, str, str]:
        amz_date = when.strftime("%Y%m%dT%H%M%SZ")
        day = amz_date[:8]
        return amz_date, day, f"{day}/{self.region}/{self.service}/aws4_request"

    def _signing_key(self, day: str, secret: str | None = None) -> bytes:
        k = _hmac(("AWS4" + (secret or self.secret_key)).encode(), day)
        k = _hmac(k, self.region)
        k = _hmac(k, self.service)
        return _hmac(k, "aws4_request")

    def _signature(self, day: str, string_to_sign: str) -> str:
        return hmac.new(self._signing_key(day), string_to_sign.encode(), hashlib.sha256).hexdigest()

    def sign_headers(self, method: str, path: str, query, headers: dict[str, str], payload_hash: str,
                     at: dt.datetime | None = None) -> tuple[dict[str, str], str, str, str]:
        """Adds `x-amz-date`, `x-amz-content-sha256` and `Authorization`; returns (headers, seed signature,
        amz date, scope)."""
        when = at or dt.datetime.now(dt.timezone.utc)
        amz_date, day, scope = self._scope(when)
        out = {k.lower(): str(v) for k, v in headers.items()}
        out.setdefault("host", self.netloc)
        out["x-amz-date"] = amz_date
        out["x-amz-content-sha256"] = payload_hash
        names = sorted(out)
        canonical_headers = "".join(f"{n}:{' '.join(out[n].strip().split())}\n" for n in names)
        signed = ";".join(names)
        canonical = "\n".join([method, path, _encode_query(query), canonical_headers, signed, payload_hash])
        sts = "\n".join(["AWS4-HMAC-SHA256", amz_date, scope, hashlib.sha256(canonical.encode()).hexdigest()])
        sig = self._signature(day, sts)
        out["authorization"] = (f"AWS4-HMAC-SHA256 Credential={self.access_key}/{scope}, "
                                f"SignedHeaders={signed}, Signature={sig}")
        return out, sig, amz_date, scope

    def presign(self, method: str, path: str, expires: int = 300, at: dt.datetime | None = None,
                query=None) -> str:
        """A presigned URL (`X-Amz-*` query parameters, `UNSIGNED-PAYLOAD`, only `host` signed)."""
        when = at or dt.datetime.now(dt.timezone.utc)
        amz_date, day, scope = self._scope(when)
        params = dict(query or {})
        params.update({
            "X-Amz-Algorithm": "AWS4-HMAC-SHA256",
            "X-Amz-Credential": f"{self.access_key}/{scope}",
            "X-Amz-Date": amz_date,
            "X-Amz-Expires": str(expires),
            "X-Amz-SignedHeaders": "host",
        })
        qs = _encode_query(params)
        canonical = "\n".join([method, path, qs, f"host:{self.netloc}\n", "host", UNSIGNED_PAYLOAD])
        sts = "\n".join(["AWS4-HMAC-SHA256", amz_date, scope, hashlib.sha256(canonical.encode()).hexdigest()])
        return f"{self.base_url}{path}?{qs}&X-Amz-Signature={self._signature(day, sts)}"

    # --- sending ---

    def send(self, method: str, path: str, query=None, headers: dict[str, str] | None = None,
             body: bytes = b"", timeout: float = 120) -> RawResponse:
        """Sends exactly this request (no signing)."""
        target = path + (("?" + (query if isinstance(query, str) else _encode_query(query))) if query else "")
        conn = http.client.HTTPConnection(self.host, self.port, timeout=timeout)
        try:
            conn.putrequest(method, target, skip_host=True, skip_accept_encoding=True)
            hdrs = {k.lower(): v for k, v in (headers or {}).items()}
            hdrs.setdefault("host", self.netloc)
            if "transfer-encoding" not in hdrs:
                hdrs.setdefault("content-length", str(len(body)))
            for k, v in hdrs.items():
                conn.putheader(k, v)
            conn.endheaders()
            if hdrs.get("transfer-encoding") == "chunked":
                for i in range(0, len(body), 65536):
                    piece = body[i:i + 65536]
                    conn.send(b"%x\r\n%s\r\n" % (len(piece), piece))
                conn.send(b"0\r\n\r\n")
            elif body:
                conn.send(body)
            resp = conn.getresponse()
            data = resp.read()
            return RawResponse(resp.status, {k.lower(): v for k, v in resp.getheaders()}, data)
        finally:
            conn.close()

    def request(self, method: str, path: str, query=None, headers: dict[str, str] | None = None,
                body: bytes = b"", payload_hash: str | None = None, at: dt.datetime | None = None,
                tamper=None, timeout: float = 120) -> RawResponse:
        """A header-signed request; `payload_hash` defaults to the body's SHA-256.
        `tamper(headers, body) -> (headers, body)` changes it after signing."""
        if payload_hash is None:
            payload_hash = hashlib.sha256(body).hexdigest()
        hdrs, _, _, _ = self.sign_headers(method, path, query, headers or {}, payload_hash, at)
        if tamper is not None:
            hdrs, body = tamper(hdrs, body)
        return self.send(method, path, query, hdrs, body, timeout)

    def streaming_put(self, path: str, data: bytes, form: str, *, algorithm: str | None = None,
                      chunk_size: int = 64 * 1024, wrong_checksum: bool = False, bad_chunk: int | None = None,
                      bad_trailer_signature: bool = False, query=None, headers: dict[str, str] | None = None,
                      http_chunked: bool = False) -> RawResponse:
        """A PUT with an aws-chunked body in `form` (one of the STREAMING-* constants).

        `algorithm` adds `x-amz-trailer: x-amz-checksum-<algorithm>` (trailer forms); `wrong_checksum` sends
        the checksum of other bytes; `bad_chunk=i` corrupts the signature of chunk i; `http_chunked` sends the
        body with `Transfer-Encoding: chunked` (as botocore does) instead of a Content-Length.
        """
        trailer_forms = (STREAMING_SIGNED_TRAILER, STREAMING_UNSIGNED_TRAILER)
        signed_chunks = form in (STREAMING_SIGNED, STREAMING_SIGNED_TRAILER)
        if form in trailer_forms and algorithm is None:
            algorithm = "CRC32"
        hdrs = {k.lower(): v for k, v in (headers or {}).items()}
        hdrs["content-encoding"] = "aws-chunked"
        hdrs.setdefault("x-amz-decoded-content-length", str(len(data)))  # a test may claim another length
        trailer_name = None
        if form in trailer_forms:
            trailer_name = f"x-amz-checksum-{algorithm.lower()}"
            hdrs["x-amz-trailer"] = trailer_name
        chunks = [data[i:i + chunk_size] for i in range(0, len(data), chunk_size)] + [b""]
        trailer_line = None
        if trailer_name:
            trailer_line = f"{trailer_name}:{checksum(algorithm, data + (b'x' if wrong_checksum else b''))}"
        # The encoded length is known before signing (signatures are 64 hex digits), so it can be a signed
        # Content-Length, as the Java SDK sends it.
        if signed_chunks:
            encoded_len = sum(len(f"{len(c):x};chunk-signature=") + 64 + 2 + len(c) + 2 for c in chunks[:-1])
            encoded_len += len("0;chunk-signature=") + 64 + 2
            if trailer_line:
                encoded_len += len(trailer_line) + 2 + len("x-amz-trailer-signature:") + 64 + 2 + 2
            else:
                encoded_len += 2
        else:
            encoded_len = sum(len(f"{len(c):x}") + 2 + len(c) + 2 for c in chunks[:-1]) + len("0\r\n")
            encoded_len += (len(trailer_line) + 2 + 2) if trailer_line else 2
        if http_chunked:
            hdrs["transfer-encoding"] = "chunked"
        else:
            hdrs["content-length"] = str(encoded_len)
        signed_headers, seed, amz_date, scope = self.sign_headers("PUT", path, query, hdrs, form)
        body = bytearray()
        previous = seed
        day = amz_date[:8]
        for i, chunk in enumerate(chunks):
            if signed_chunks:
                sts = "\n".join(["AWS4-HMAC-SHA256-PAYLOAD", amz_date, scope, previous, EMPTY_SHA256,
                                 hashlib.sha256(chunk).hexdigest()])
                sig = self._signature(day, sts)
                previous = sig
                if bad_chunk == i:
                    sig = ("0" if sig[0] != "0" else "1") + sig[1:]
                body += f"{len(chunk):x};chunk-signature={sig}\r\n".encode()
                if chunk:
                    body += chunk + b"\r\n"
                elif form == STREAMING_SIGNED:
                    body += b"\r\n"
            else:
                body += f"{len(chunk):x}\r\n".encode()
                if chunk:
                    body += chunk + b"\r\n"
        if trailer_line:
            body += trailer_line.encode() + b"\r\n"
            if form == STREAMING_SIGNED_TRAILER:
                sts = "\n".join(["AWS4-HMAC-SHA256-TRAILER", amz_date, scope, previous,
                                 hashlib.sha256((trailer_line + "\n").encode()).hexdigest()])
                sig = self._signature(day, sts)
                if bad_trailer_signature:
                    sig = ("0" if sig[0] != "0" else "1") + sig[1:]
                body += f"x-amz-trailer-signature:{sig}\r\n".encode()
            body += b"\r\n"
        elif not signed_chunks:
            body += b"\r\n"
        if not http_chunked:
            assert len(body) == encoded_len, (len(body), encoded_len)
        return self.send("PUT", path, query, signed_headers, bytes(body))
