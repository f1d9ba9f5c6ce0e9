"""Expectations shared by the test files: identifier shapes from reference/s3tables-api.md §3.4,
the error contract of §1.5, and helpers that make unique names and empty a bucket.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import re
import uuid

import pytest
from dateutil.parser import isoparse
from botocore.exceptions import ClientError

from . import ACCOUNT_ID, REGION

UUID = r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}"
WAREHOUSE_RE = re.compile(rf"^s3://({UUID})--table-s3$")
RFC3339_Z_RE = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?Z$")
FORBIDDEN_CODES = ("ForbiddenException", "AccessDeniedException")
MODELED_ERRORS = {
    "BadRequestException": 400, "ForbiddenException": 403, "AccessDeniedException": 403,
    "NotFoundException": 404, "MethodNotAllowedException": 405, "ConflictException": 409,
    "TooManyRequestsException": 429, "InternalServerErrorException": 500,
}


def bucket_arn(name: str, flavor: str = "aws") -> str:
    if flavor == "aws":
        return f"arn:aws:s3tables:{REGION}:{ACCOUNT_ID}:bucket/{name}"
    return f"acs:osstables:{REGION}:{ACCOUNT_ID}:bucket/{name}"


def table_arn_re(bucket_arn_: str) -> re.Pattern:
    """A table ARN is the bucket ARN + `/table/<uuid>`: by id, not by name (§3.4)."""
    return re.compile(rf"^{re.escape(bucket_arn_)}/table/({UUID})$")


def metadata_location_re(warehouse: str, version: int = 0) -> re.Pattern:
    return re.compile(rf"^{re.escape(warehouse)}/metadata/{version:05d}-{UUID}\.metadata\.json$")


def unique(prefix: str, sep: str = "-") -> str:
    """A fresh name: `sep` is `-` for buckets and `_` for namespaces and tables."""
    return f"{prefix}{sep}{uuid.uuid4().hex[:12]}"


def status(resp: dict) -> int:
    return resp["ResponseMetadata"]["HTTPStatusCode"]


def assert_recent(ts, slack_seconds: float = 900) -> None:
    """A boto3-parsed timestamp: timezone-aware and close to now."""
    assert isinstance(ts, dt.datetime), ts
    assert ts.tzinfo is not None, f"timestamp without zone: {ts!r}"
    now = dt.datetime.now(dt.timezone.utc)
    assert abs((now - ts).total_seconds()) < slack_seconds, f"{ts} is not close to {now}"


def assert_wire_timestamp(text: str) -> None:
    """What goes on the wire: RFC 3339 UTC with `Z` (§1.4)."""
    assert isinstance(text, str) and RFC3339_Z_RE.match(text), f"not an RFC 3339 UTC timestamp: {text!r}"
    assert_recent(isoparse(text))


@contextlib.contextmanager
def api_error(codes, http_status: int):
    """Expects a boto3 call to fail with one of the modeled error `codes` and `http_status`.

    Also checks the error carries a message (the body's `message` member).
    """
    if isinstance(codes, str):
        codes = (codes,)
    with pytest.raises(ClientError) as info:
        yield info
    err = info.value.response
    code = err.get("Error", {}).get("Code")
    assert code in codes, f"error code {code!r}, wanted one of {codes}: {err}"
    assert err["ResponseMetadata"]["HTTPStatusCode"] == http_status, err
    assert err["Error"].get("Message"), f"error without message: {err}"


def assert_raw_error(resp, http_status: int, codes) -> dict:
    """A raw response carries the restJson1 error contract of §1.5; returns the body."""
    if isinstance(codes, str):
        codes = (codes,)
    assert resp.status_code == http_status, f"{resp.status_code} {resp.headers} {resp.text[:500]}"
    assert resp.headers.get("x-amzn-ErrorType", "").split(":")[0] in codes, resp.headers
    assert resp.headers.get("Content-Type") == "application/json", resp.headers
    body = resp.json()
    assert isinstance(body.get("message"), str) and body["message"], body
    return body


def purge_bucket(client, arn: str) -> None:
    """Deletes every table and namespace of a bucket, its policy, then the bucket; gone already is fine."""
    def ignore_missing(fn, **kw):
        try:
            return fn(**kw)
        except ClientError as e:
            if e.response["ResponseMetadata"]["HTTPStatusCode"] != 404:
                raise
            return None

    if ignore_missing(client.get_table_bucket, tableBucketARN=arn) is None:
        return
    for page in client.get_paginator("list_tables").paginate(tableBucketARN=arn):
        for t in page["tables"]:
            ignore_missing(client.delete_table, tableBucketARN=arn, namespace=t["namespace"][0], name=t["name"])
    for page in client.get_paginator("list_namespaces").paginate(tableBucketARN=arn):
        for ns in page["namespaces"]:
            ignore_missing(client.delete_namespace, tableBucketARN=arn, namespace=ns["namespace"][0])
    try:  # best effort: the bucket delete below reports what matters
        client.delete_table_bucket_policy(tableBucketARN=arn)
    except ClientError:
        pass
    ignore_missing(client.delete_table_bucket, tableBucketARN=arn)


def new_metadata_location(warehouse: str, version: int = 1) -> str:
    """A metadata file name as Iceberg writers choose it: `<warehouse>/metadata/NNNNN-<uuid>.metadata.json`."""
    return f"{warehouse}/metadata/{version:05d}-{uuid.uuid4()}.metadata.json"
