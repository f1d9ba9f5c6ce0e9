#!/usr/bin/env python3
"""Generates the real-client SigV4 fixtures in testdata/sigv4/ (read by tests/client_vectors.rs).

How it was run (any recent botocore works; the fixtures record the version used):

    python3 -m venv /tmp/sigv4-venv
    /tmp/sigv4-venv/bin/pip install 'botocore==1.40.*'
    /tmp/sigv4-venv/bin/python crates/tablebay-auth/testdata/gen_botocore_vectors.py

Every fixture is one request as it goes on the wire: method, raw path + query, headers (including the
`Host` urllib3/requests add, and the unsigned ones), body, plus the fixed signing time and credentials.
The clock is frozen by patching `botocore.auth.get_current_datetime`.

- `botocore-*`: the real botocore `s3tables` client (the aws-cli path). The request is captured from the
  `before-send` event, i.e. after signing and exactly as botocore would send it.
- `pyiceberg-*`: botocore `SigV4Auth` driven the way PyIceberg's `SigV4Adapter` drives it (headers of a
  `requests` session, query re-parsed with `parse_qsl`, so a `+` in the wire query is signed as a space).
- `presigned-*`: botocore `SigV4QueryAuth` (non-S3: payload = hash of the empty body) and
  `S3SigV4QueryAuth` (`UNSIGNED-PAYLOAD`, path not re-encoded).
- `java-*`: `SigV4Auth` subclassed to behave like the AWS SDK for Java v2 `Aws4Signer` as Iceberg 1.10's
  `RESTSigV4AuthSession` uses it: Java's base headers are signed, `x-amz-content-sha256` is the BASE64
  digest for non-empty bodies (hex for empty ones) while the canonical request uses the hex digest
  (trap 17); `java-latin1-body` hashes the UTF-8 JSON but sends ISO-8859-1 bytes (trap 19).
- `duckdb-*`: DuckDB 1.5's hand-written signer (duckdb-iceberg `src/aws.cpp`): canonical URI = wire
  path with only `%2F` -> `%252F`, canonical query = the query string as built (not sorted),
  signed headers `[content-type;]host;x-amz-content-sha256;x-amz-date`.
"""

import base64
import datetime
import hashlib
import hmac
import json
import os
import sys
import uuid
from urllib.parse import parse_qsl, urlencode, urlsplit

import botocore
import botocore.auth
import botocore.session
from botocore.auth import SigV4Auth, SigV4QueryAuth, S3SigV4QueryAuth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "sigv4")
NOW = datetime.datetime(2026, 11, 30, 0, 6, 33, tzinfo=datetime.timezone.utc)
ACCESS_KEY = "AKIAIOSFODNN7EXAMPLE"
SECRET_KEY = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
SESSION_TOKEN = "FwoGZXIvYXdzEXAMPLE//////////wEaDEXAMPLETOKEN+abc/def=="
REGION = "us-east-1"
ENDPOINT = "http://127.0.0.1:8765"
HOST = "127.0.0.1:8765"
BUCKET_ARN = "arn:aws:s3tables:us-east-1:111122223333:bucket/mybucket"
# An S3 Tables Iceberg prefix is the URL-encoded bucket ARN, one path segment.
ICEBERG_BASE = "/iceberg/v1/arn%3Aaws%3As3tables%3Aus-east-1%3A111122223333%3Abucket%2Fb"

botocore.auth.get_current_datetime = lambda: NOW.replace(tzinfo=None)
# amz-sdk-invocation-id (unsigned) would otherwise change on every run.
uuid.uuid4 = lambda: uuid.UUID(int=0x5167_4000_8000_0000_0000_0000)
CLIENT = f"botocore {botocore.__version__}"


def write(name, client, method, target, headers, body, service, mechanism="header", token=None, note=""):
    if isinstance(body, str):
        body = body.encode("utf-8")
    body = body or b""
    fixture = {
        "name": name,
        "client": client,
        "note": note,
        "mechanism": mechanism,
        "method": method,
        "target": target,
        "headers": [[k, v] for k, v in headers],
        "body_base64": base64.b64encode(body).decode("ascii"),
        "now": NOW.strftime("%Y-%m-%dT%H:%M:%SZ"),
        "region": REGION,
        "service": service,
        "access_key_id": ACCESS_KEY,
        "secret_access_key": SECRET_KEY,
        "session_token": token,
    }
    with open(os.path.join(OUT, name + ".json"), "w") as f:
        json.dump(fixture, f, indent=2, ensure_ascii=False)
        f.write("\n")
    print("wrote", name, file=sys.stderr)


def target_of(url):
    parts = urlsplit(url)
    return parts.path + ("?" + parts.query if parts.query else "")


def header_items(headers):
    out = []
    for k, v in headers.items():
        if isinstance(v, bytes):
            v = v.decode("latin-1")
        out.append((k, v))
    return out


# --- the real s3tables client ---------------------------------------------------------------------


class Captured(Exception):
    def __init__(self, request):
        self.request = request


def capture(request, **_kwargs):
    raise Captured(request)


def client(token=None):
    session = botocore.session.get_session()
    c = session.create_client(
        "s3tables",
        region_name=REGION,
        endpoint_url=ENDPOINT,
        aws_access_key_id=ACCESS_KEY,
        aws_secret_access_key=SECRET_KEY,
        aws_session_token=token,
    )
    c.meta.events.register("before-send.s3tables", capture)
    return c


def record_client_call(name, call, token=None, note=""):
    try:
        call(client(token))
    except Captured as captured:
        req = captured.request
        headers = [("Host", HOST)] + header_items(req.headers)
        write(name, CLIENT + " s3tables client", req.method, target_of(req.url), headers, req.body,
              "s3tables", token=token, note=note)
        return
    raise RuntimeError("request was not captured")


record_client_call(
    "botocore-create-namespace",
    lambda c: c.create_namespace(tableBucketARN=BUCKET_ARN, namespace=["sales"]),
    note="PUT with a JSON body; the bucket ARN is one percent-encoded path segment (%3A, %2F)",
)
record_client_call(
    "botocore-list-table-buckets-query",
    lambda c: c.list_table_buckets(prefix="a", maxBuckets=10, continuationToken="abc/+="),
    note="GET with a query; the continuation token is sent as abc%2F%2B%3D",
)
record_client_call(
    "botocore-delete-table-bucket",
    lambda c: c.delete_table_bucket(tableBucketARN=BUCKET_ARN),
    note="bodiless DELETE: no Content-Type, empty payload hash",
)
record_client_call(
    "botocore-get-table-bucket-session-token",
    lambda c: c.get_table_bucket(tableBucketARN=BUCKET_ARN),
    token=SESSION_TOKEN,
    note="temporary credentials: x-amz-security-token is signed",
)


# --- PyIceberg's SigV4Adapter (requests + botocore SigV4Auth) -------------------------------------


def requests_headers(body):
    # What a requests.Session sends (Connection is deleted by PyIceberg before signing) plus PyIceberg's
    # session headers.
    headers = {
        "User-Agent": "PyIceberg/0.10.0",
        "Accept-Encoding": "gzip, deflate",
        "Accept": "*/*",
        "Content-type": "application/json",
        "X-Client-Version": "0.14.1",
        "X-Iceberg-Access-Delegation": "vended-credentials",
    }
    if body:
        headers["Content-Length"] = str(len(body))
    return headers


def pyiceberg(name, method, path, params, body, note):
    query = urlencode(params) if params else ""
    url = ENDPOINT + path + ("?" + query if query else "")
    headers = requests_headers(body)
    # PyIceberg: url without query, params from parse_qsl (decodes + as space, drops blank values).
    aws_request = AWSRequest(method=method, url=url.split("?")[0], params=dict(parse_qsl(query)),
                             data=body, headers=dict(headers))
    SigV4Auth(Credentials(ACCESS_KEY, SECRET_KEY), "s3tables", REGION).add_auth(aws_request)
    wire = {**headers, **dict(aws_request.headers)}
    write(name, CLIENT + " SigV4Auth as PyIceberg's SigV4Adapter uses it", method, target_of(url),
          [("Host", HOST)] + header_items(wire), body, "s3tables", note=note)


# botocore signs with Date instead of X-Amz-Date when the request already has a Date header.
date_request = AWSRequest(method="GET", url=ENDPOINT + "/buckets", headers={"Date": "placeholder"})
SigV4Auth(Credentials(ACCESS_KEY, SECRET_KEY), "s3tables", REGION).add_auth(date_request)
write("botocore-date-header", CLIENT + " SigV4Auth", "GET", "/buckets",
      [("Host", HOST)] + header_items(date_request.headers), b"", "s3tables",
      note="Date header instead of X-Amz-Date; the string to sign uses 20261130T000633Z")

pyiceberg(
    "pyiceberg-create-table",
    "POST",
    ICEBERG_BASE + "/namespaces/ns%1Fsub/tables",
    None,
    json.dumps({"name": "t", "schema": {"type": "struct", "fields": [], "schema-id": 0}}).encode(),
    "Iceberg path with an encoded ARN prefix and a %1F namespace separator",
)
pyiceberg(
    "pyiceberg-list-namespaces-plus",
    "GET",
    ICEBERG_BASE + "/namespaces",
    {"parent": "ns\x1fsub", "pageToken": "a b+c"},
    b"",
    "requests form-encodes the query (space -> +); the signature covers parse_qsl's decoding (%20)",
)


# --- presigned URLs -------------------------------------------------------------------------------


def presigned(name, signer_cls, service, path, token, note):
    creds = Credentials(ACCESS_KEY, SECRET_KEY, token)
    req = AWSRequest(method="GET", url=ENDPOINT + path, headers={})
    signer_cls(creds, service, REGION, expires=900).add_auth(req)
    write(name, CLIENT + " " + signer_cls.__name__, "GET", target_of(req.url), [("Host", HOST)], b"",
          service, mechanism="presigned", token=token, note=note)


presigned("presigned-sigv4-query", SigV4QueryAuth, "s3tables", "/buckets?maxBuckets=10", None,
          "non-S3 presigning signs the empty body's hash, not UNSIGNED-PAYLOAD")
presigned("presigned-s3-style-session-token", S3SigV4QueryAuth, "s3tables",
          "/buckets/arn%3Aaws%3As3tables%3Aus-east-1%3A111122223333%3Abucket%2Fmybucket", SESSION_TOKEN,
          "S3-style presigning: UNSIGNED-PAYLOAD, canonical URI = wire path (single encoding)")


# --- Java (AWS SDK v2 Aws4Signer via Iceberg 1.10 RESTSigV4AuthSession) ---------------------------


class JavaStyleSigV4Auth(SigV4Auth):
    """The canonical request always hashes the body (hex), whatever x-amz-content-sha256 says."""

    def canonical_request(self, request):
        cr = [request.method.upper(), self._normalize_url_path(urlsplit(request.url).path),
              self.canonical_query_string(request)]
        headers_to_sign = self.headers_to_sign(request)
        cr.append(self.canonical_headers(headers_to_sign) + "\n")
        cr.append(self.signed_headers(headers_to_sign))
        cr.append(self.payload(request))
        return "\n".join(cr)


def java(name, method, path, query, json_text, wire_encoding, note):
    signed_body = json_text.encode("utf-8") if json_text else b""
    wire_body = json_text.encode(wire_encoding, errors="replace") if json_text else b""
    digest = hashlib.sha256(signed_body)
    content_sha = base64.b64encode(digest.digest()).decode() if signed_body else digest.hexdigest()
    headers = {
        "Accept": "application/json",
        "Content-Type": "application/json",
        "X-Client-Version": "Apache Iceberg 1.10.0 (commit 2114bf631e49af532d66e2ce148ee49dd1dd1f1f)",
        "X-Client-Git-Commit-Short": "2114bf63",
        "Host": HOST,
        "x-amz-content-sha256": content_sha,
    }
    url = ENDPOINT + path + ("?" + query if query else "")
    req = AWSRequest(method=method, url=url, data=signed_body, headers=dict(headers))
    JavaStyleSigV4Auth(Credentials(ACCESS_KEY, SECRET_KEY), "s3tables", REGION).add_auth(req)
    wire = dict(req.headers)
    # Added by the Apache HTTP client after signing, so unsigned.
    wire["User-Agent"] = "Apache-HttpClient/5.5 (Java/17.0.12)"
    wire["Accept-Encoding"] = "gzip, x-gzip, deflate"
    if wire_body:
        wire["Content-Length"] = str(len(wire_body))
    wire["Connection"] = "keep-alive"
    write(name, CLIENT + " SigV4Auth adapted to AWS SDK v2 Aws4Signer (Iceberg 1.10 Java)", method,
          target_of(url), header_items(wire), wire_body, "s3tables", note=note)


java("java-create-table-base64-content-sha", "POST", ICEBERG_BASE + "/namespaces/ns%1Fsub/tables", None,
     json.dumps({"name": "t", "stage-create": False}), "utf-8",
     "x-amz-content-sha256 is the base64 digest (signed) while the canonical request uses hex (trap 17)")
java("java-list-namespaces-empty-page-token", "GET", ICEBERG_BASE + "/namespaces", "pageToken=&parent=ns%1Fsub",
     None, "utf-8", "Java sends pageToken= on every first list call; Content-Type also on GET")
java("java-latin1-body", "POST", ICEBERG_BASE + "/namespaces", None,
     json.dumps({"namespace": ["caf\u00e9"], "properties": {"comment": "na\u00efve"}}, ensure_ascii=False),
     "latin-1", "body sent as ISO-8859-1 bytes, signed as the UTF-8 bytes (trap 19)")


# --- DuckDB 1.5 (duckdb-iceberg src/aws.cpp) ------------------------------------------------------


def hmac256(key, msg):
    return hmac.new(key, msg.encode("utf-8"), hashlib.sha256).digest()


def duckdb(name, method, path, query, body, content_type, note):
    amz_date = NOW.strftime("%Y%m%dT%H%M%SZ")
    date = amz_date[:8]
    payload_hash = hashlib.sha256(body).hexdigest()
    signed = ("content-type;" if content_type else "") + "host;x-amz-content-sha256;x-amz-date"
    creq = method + "\n" + path.replace("%2F", "%252F") + "\n" + (query or "")
    if content_type:
        creq += "\ncontent-type:" + content_type
    creq += "\nhost:" + HOST + "\nx-amz-content-sha256:" + payload_hash + "\nx-amz-date:" + amz_date
    creq += "\n\n" + signed + "\n" + payload_hash
    scope = f"{date}/{REGION}/s3tables/aws4_request"
    sts = "AWS4-HMAC-SHA256\n" + amz_date + "\n" + scope + "\n" + hashlib.sha256(creq.encode()).hexdigest()
    key = hmac256(("AWS4" + SECRET_KEY).encode(), date)
    for part in (REGION, "s3tables", "aws4_request"):
        key = hmac256(key, part)
    signature = hmac.new(key, sts.encode(), hashlib.sha256).hexdigest()
    headers = [("host", HOST), ("x-amz-date", amz_date), ("x-amz-content-sha256", payload_hash)]
    if content_type:
        headers.append(("Content-Type", content_type))
    headers.append(("Authorization", f"AWS4-HMAC-SHA256 Credential={ACCESS_KEY}/{scope}, "
                                      f"SignedHeaders={signed}, Signature={signature}"))
    headers.append(("User-Agent", "duckdb/v1.5.0(linux_amd64) python/3.11.7"))
    if body:
        headers.append(("Content-Length", str(len(body))))
    write(name, "DuckDB 1.5 signer (duckdb-iceberg src/aws.cpp), re-implemented in Python", method,
          path + ("?" + query if query else ""), headers, body, "s3tables", note=note)


duckdb("duckdb-create-table", "POST", ICEBERG_BASE + "/namespaces/ns%1Fsub/tables", None,
       json.dumps({"name": "t", "stage-create": True}).encode(), "application/json",
       "canonical URI = wire path with only %2F -> %252F (trap 18)")
duckdb("duckdb-list-tables-unsorted-query", "GET", ICEBERG_BASE + "/namespaces/ns%1Fsub/tables",
       "pageToken=t1&pageSize=10", b"", None,
       "DuckDB signs the query string as built, not sorted")
