"""Raw HTTP requests to the tables listener, SigV4-signed with botocore's own signer.

Used where boto3 cannot send what a test needs: the legacy GetTable route, malformed or oversized
bodies, values that botocore's client-side validation rejects, skewed clocks, tampered or unsigned
requests. Paths are given as they go on the wire (ARNs already percent-encoded, see `quote_arn`);
botocore's `SigV4Auth` then double-encodes the path for the canonical request exactly as the real
clients do (reference/s3tables-api.md §1.1).
"""

from __future__ import annotations

import datetime as dt
import json
from unittest import mock
from urllib.parse import quote

import requests
from botocore.auth import SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials

from . import ACCESS_KEY_ID, REGION, SECRET_ACCESS_KEY


def quote_arn(arn: str) -> str:
    """A path label as botocore sends it: one segment, `:` → `%3A`, `/` → `%2F`."""
    return quote(arn, safe="")


def signed_request(
    base_url: str,
    method: str,
    path: str,
    body: bytes | str | dict | None = None,
    *,
    headers: dict[str, str] | None = None,
    access_key: str = ACCESS_KEY_ID,
    secret_key: str = SECRET_ACCESS_KEY,
    service: str = "s3tables",
    region: str = REGION,
    at: dt.datetime | None = None,
    sign: bool = True,
    tamper=None,
    timeout: float = 60,
) -> requests.Response:
    """Sends `method base_url+path` with an optional JSON body, signed like botocore signs it.

    `at` signs with that clock instead of now; `sign=False` sends no auth at all; `tamper(headers, body)`
    may change the request after signing and returns the new `(headers, body)`.
    """
    if isinstance(body, dict):
        body = json.dumps(body)
    if isinstance(body, str):
        body = body.encode()
    hdrs = dict(headers or {})
    if body is not None and not any(k.lower() == "content-type" for k in hdrs):
        hdrs["Content-Type"] = "application/json"
    url = base_url.rstrip("/") + path
    req = AWSRequest(method=method, url=url, data=body, headers=hdrs)
    if sign:
        signer = SigV4Auth(Credentials(access_key, secret_key), service, region)
        if at is None:
            signer.add_auth(req)
        else:
            with mock.patch("botocore.auth.get_current_datetime", return_value=at.replace(tzinfo=None)):
                signer.add_auth(req)
    out_headers = dict(req.headers.items())
    if tamper is not None:
        out_headers, body = tamper(out_headers, body)
    return requests.request(method, url, headers=out_headers, data=body, timeout=timeout)


def utcnow() -> dt.datetime:
    return dt.datetime.now(dt.timezone.utc)
