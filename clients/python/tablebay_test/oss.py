"""Alibaba's OSS SDK V2 for Python (`alibabacloud-oss-v2`) and its Tables client, as the suite drives it: the
SDK's own `TablesSignerV4` with the knobs the SDK does not expose, a client factory, in-process name resolution
for virtual-hosted endpoints, and the OSS error contract.

What the SDK sends is described in reference/oss-v4-tables-signing.md; the facts the code below depends on:

- `tables.Client` installs a fresh `TablesSignerV4` after construction and takes no signer option, so a test
  that needs another signer replaces `client._client._options.signer` (`with_signer`).
- `Config.additional_headers` never reaches the signer in 1.4.1 (`build_request_context` does not copy it into
  the `SigningContext`); `SdkSigner(additional_headers=…)` sets it on the context, as the Go SDK does.
- In the header form the signer always sends `x-oss-content-sha256: UNSIGNED-PAYLOAD`; a `before_sign` hook
  (e.g. `declare_payload_sha256`) runs after that and before the canonical request is built, so what it sets is
  signed.
"""

from __future__ import annotations

import ast
import contextlib
import datetime as dt
import hashlib
import json
import socket
from typing import Callable, Iterable

import pytest
import alibabacloud_oss_v2 as oss
from alibabacloud_oss_v2 import exceptions as oss_errors
from alibabacloud_oss_v2 import tables
from alibabacloud_oss_v2.credentials import StaticCredentialsProvider
from alibabacloud_oss_v2.signer.tables_v4 import TablesSignerV4

from . import ACCESS_KEY_ID, REGION, SECRET_ACCESS_KEY

models = tables.models

PRODUCT = "osstables"

# The Kafka Connect guide's values (product-guides/000_…: schema.json, and the maintenance settings it puts).
GUIDE_SCHEMA = {"iceberg": {"schema": {"fields": [
    {"name": "event_id", "type": "string", "required": True},
    {"name": "event_time", "type": "string"},
    {"name": "event_type", "type": "string"},
]}}}
GUIDE_COMPACTION = {"status": "enabled", "settings": {"icebergCompaction": {"targetFileSizeMB": 256}}}
GUIDE_FILE_REMOVAL = {"status": "enabled",
                      "settings": {"icebergUnreferencedFileRemoval": {"unreferencedDays": 4, "nonCurrentDays": 10}}}


class SdkSigner(TablesSignerV4):
    """The SDK's `TablesSignerV4`, unchanged in what it computes, with what a test must choose and cannot through
    the SDK's configuration: the signing time (`at`, or `clock_offset` seconds from now: the SDK's own skew
    correction), a presigned URL's validity (`expires`, seconds, for
    `auth_method="query"`), the scope's product, additional headers, `before_sign(request)` to change the request
    just before it is canonicalised (what it sets is signed) and `after_sign(request)` to change it once it is
    signed. It keeps the last canonical request and string to sign."""

    def __init__(self, *, at: dt.datetime | None = None, clock_offset: int = 0, expires: int | None = None,
                 product: str | None = None,
                 additional_headers: Iterable[str] = (), before_sign: Callable | None = None,
                 after_sign: Callable | None = None) -> None:
        self.at = at
        self.clock_offset = clock_offset
        self.expires = expires
        self.product = product
        self.additional_headers = set(additional_headers)
        self.before_sign = before_sign
        self.after_sign = after_sign
        self.canonical_request: str | None = None
        self.string_to_sign: str | None = None

    def sign(self, signing_ctx) -> None:
        if self.at is not None:
            signing_ctx.signing_time = self.at
        signing_ctx.clock_offset = self.clock_offset
        if self.expires is not None:
            start = self.at or dt.datetime.now(dt.timezone.utc)
            signing_ctx.expiration_time = start + dt.timedelta(seconds=self.expires)
        if self.product is not None:
            signing_ctx.product = self.product
        if self.additional_headers:
            signing_ctx.additional_headers = set(self.additional_headers)
        super().sign(signing_ctx)
        self.string_to_sign = signing_ctx.string_to_sign
        if self.after_sign is not None:
            self.after_sign(signing_ctx.request)

    def _calc_canonical_request(self, signing_ctx, additional_headers=None) -> str:
        if self.before_sign is not None:
            self.before_sign(signing_ctx.request)
        self.canonical_request = super()._calc_canonical_request(signing_ctx, additional_headers)
        return self.canonical_request


def declare_payload_sha256(request) -> None:
    """`before_sign`: declares the body's real SHA-256 in `x-oss-content-sha256` (the SDKs never do)."""
    request.headers["x-oss-content-sha256"] = hashlib.sha256(request.body or b"").hexdigest()


def tables_client(endpoint: str, *, region: str = REGION, access_key: str = ACCESS_KEY_ID,
                  secret_key: str = SECRET_ACCESS_KEY, token: str | None = None, path_style: bool = False,
                  signer: SdkSigner | None = None, http_client=None) -> tables.Client:
    """The SDK's Tables client with static credentials, no retries (a server error must show as one) and bounded
    timeouts. An IP endpoint makes the SDK use path style whatever `path_style` says."""
    cfg = oss.Config(
        region=region,
        endpoint=endpoint,
        credentials_provider=StaticCredentialsProvider(access_key, secret_key, token),
        use_path_style=path_style,
        retry_max_attempts=1,
        connect_timeout=10,
        readwrite_timeout=60,
        http_client=http_client,
    )
    client = tables.Client(cfg)
    return with_signer(client, signer) if signer is not None else client


def with_signer(client: tables.Client, signer: SdkSigner) -> tables.Client:
    """`client` signing with `signer` from now on (see the module docs for why this reaches inside)."""
    client._client._options.signer = signer  # noqa: SLF001 (no public way to choose the signer)
    return client


@contextlib.contextmanager
def loopback_names(domain: str):
    """Resolves `domain` and every name under it to 127.0.0.1 in this process (the SDK builds virtual hosts
    `<bucket>-<account>.<endpoint host>`, which no resolver knows); yields the names resolved, in order."""
    real = socket.getaddrinfo
    resolved: list[str] = []

    def getaddrinfo(host, port, *args, **kwargs):
        name = host.decode() if isinstance(host, bytes) else host
        if isinstance(name, str) and (name == domain or name.endswith("." + domain)):
            resolved.append(name)
            host = "127.0.0.1"
        return real(host, port, *args, **kwargs)

    socket.getaddrinfo = getaddrinfo
    try:
        yield resolved
    finally:
        socket.getaddrinfo = real


def service_error(info: pytest.ExceptionInfo) -> oss_errors.ServiceError:
    """The `ServiceError` inside the SDK's `OperationError`."""
    err = info.value.unwrap() if isinstance(info.value, oss_errors.OperationError) else info.value
    assert isinstance(err, oss_errors.ServiceError), f"not a service error: {err!r}"
    return err


@contextlib.contextmanager
def oss_error(http_status: int, codes):
    """Expects an SDK call to fail with `http_status` and one of `codes`, in the OSS Tables error shape the SDK
    parses first: `Content-Type: application/json` (exactly), `x-oss-error-type: <code>`, a `{"message": …}` body,
    and `x-oss-request-id`. Yields the `pytest.raises` info; `.value.unwrap()` is the `ServiceError`."""
    if isinstance(codes, str):
        codes = (codes,)
    with pytest.raises(oss_errors.OperationError) as info:
        yield info
    err = service_error(info)
    assert err.status_code == http_status, f"{err.status_code} {err.code} {err.message}"
    assert err.code in codes, f"error code {err.code!r}, wanted one of {codes}: {err.message}"
    assert err.headers.get("x-oss-error-type") == err.code, err.headers
    assert err.headers.get("Content-Type") == "application/json", err.headers
    body = json.loads(err.snapshot)
    assert isinstance(body.get("message"), str) and body["message"] and body["message"] == err.message, body
    assert err.request_id and err.request_id == err.headers.get("x-oss-request-id"), err.headers


def configuration(result) -> dict:
    """A maintenance configuration from the SDK's result: the models declare no type for `configuration`, so the
    SDK stores `str(dict)` (a Python repr, not JSON)."""
    value = result.configuration
    return ast.literal_eval(value) if isinstance(value, str) else value


def table_metadata(schema_json: dict) -> models.TableMetadata:
    """`{"iceberg": {"schema": {"fields": [...]}}}` (the guide's schema.json) as the SDK's models."""
    fields = [models.SchemaField(name=f["name"], type=f["type"], required=f.get("required"))
              for f in schema_json["iceberg"]["schema"]["fields"]]
    return models.TableMetadata(iceberg=models.IcebergMetadata(schema=models.IcebergSchema(fields=fields)))
